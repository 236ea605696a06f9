(
  cd /home/user/releases || return
  ok=0 failed=0 missing=0
  : > /home/user/releases/verify.txt.tmp
  while read -r sum name; do
    name=${name#\*}
    if [ ! -e "$name" ]; then s=MISSING; missing=$((missing + 1))
    elif [ "$(sha512sum < "$name" | cut -d' ' -f1)" = "$sum" ]; then s=OK; ok=$((ok + 1))
    else s=FAILED; failed=$((failed + 1)); fi
    printf '%s: %s\n' "$name" "$s" >> /home/user/releases/verify.txt.tmp
  done < /home/user/releases/SHA512SUMS
  printf 'total: %d, ok: %d, failed: %d, missing: %d\n' $((ok + failed + missing)) $ok $failed $missing >> /home/user/releases/verify.txt.tmp
  mv /home/user/releases/verify.txt.tmp /home/user/releases/verify.txt
)
