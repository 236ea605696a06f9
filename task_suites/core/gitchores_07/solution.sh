(
  cd /home/user/work/umbra || return
  : > /home/user/todo/prune-report.txt
  while IFS= read -r b; do
    [ -z "$b" ] && continue
    if ! git rev-parse -q --verify "refs/heads/$b" >/dev/null; then echo "missing $b"
    elif git merge-base --is-ancestor "refs/heads/$b" main; then git branch -q -D "$b" && echo "deleted $b"
    else echo "kept $b"; fi >> /home/user/todo/prune-report.txt
  done < /home/user/todo/prune.txt
)
