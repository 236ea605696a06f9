mkdir -p /home/user/backups/snapshot
(
  cd /home/user || return
  grep -v -e '^#' -e '^[[:space:]]*$' backup.list | LC_ALL=C sort > backups/snapshot/.list.tmp
  while IFS= read -r path; do
    cp --parents -p -- "$path" backups/snapshot/
  done < backups/snapshot/.list.tmp
  cd backups/snapshot || return
  xargs -d '\n' sha256sum -- < .list.tmp > SHA256SUMS
  rm -f .list.tmp
)
