mkdir -p /home/user/archives
(
  cd /home/user || return
  # Reproducible archive: fixed order, mtime, owner and mode; gzip without a name or timestamp.
  grep -v -e '^#' -e '^[[:space:]]*$' reports/MANIFEST.txt \
    | tar --no-recursion --sort=name --mtime=@1735603200 --owner=0 --group=0 --numeric-owner \
          --mode='a=r,u+w' -cf - -T - \
    | gzip -n -9 > archives/reports-2024.tar.gz
  cd archives && sha256sum reports-2024.tar.gz > reports-2024.tar.gz.sha256
)
