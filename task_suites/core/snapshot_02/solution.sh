mkdir -p /home/user/snapshots/20240724
(
  cd /home/user || return
  grep -v -e '^#' -e '^[[:space:]]*$' etc/backup-files.txt | LC_ALL=C sort | while IFS= read -r p; do
    cp --parents -p -- "$p" snapshots/20240724/
  done
  cd snapshots/20240724 && grep -v -e '^#' -e '^[[:space:]]*$' /home/user/etc/backup-files.txt | LC_ALL=C sort | xargs -d '\n' sha256sum -- > SHA256SUMS
)
