mkdir -p /home/user/backups/releases
( cd /home/user/src/raven && grep -v -e '^#' -e '^[[:space:]]*$' RELEASE_FILES | tar --no-recursion -cJf /home/user/backups/releases/raven-2.7.5.tar.xz -T - )
( cd /home/user/backups/releases && sha256sum raven-2.7.5.tar.xz > raven-2.7.5.tar.xz.sha256 )
