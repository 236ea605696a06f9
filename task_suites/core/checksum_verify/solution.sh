(
  cd /home/user/downloads || return
  ok=0 failed=0 missing=0 total=0
  : > verify.txt.tmp
  while read -r sum name; do
    [ -z "$name" ] && continue
    total=$((total + 1))
    if [ ! -e "$name" ]; then
      status=MISSING; missing=$((missing + 1))
    elif [ "$(sha256sum < "$name" | cut -d' ' -f1)" = "$sum" ]; then
      status=OK; ok=$((ok + 1))
    else
      status=FAILED; failed=$((failed + 1))
    fi
    printf '%s: %s\n' "$name" "$status" >> verify.txt.tmp
  done < SHA256SUMS
  printf 'total: %d, ok: %d, failed: %d, missing: %d\n' "$total" "$ok" "$failed" "$missing" >> verify.txt.tmp
  mv verify.txt.tmp verify.txt
)
