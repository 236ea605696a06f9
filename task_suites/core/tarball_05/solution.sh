mkdir -p /home/user/dist
( cd /home/user/projects/delta && grep -v -e '^#' -e '^[[:space:]]*$' RELEASE_FILES | tar --no-recursion -cJf /home/user/dist/delta-2.6.9.tar.xz -T - )
( cd /home/user/dist && sha256sum delta-2.6.9.tar.xz > delta-2.6.9.tar.xz.sha256 )
