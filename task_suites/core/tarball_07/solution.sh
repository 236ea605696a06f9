mkdir -p /home/user/releases
( cd /home/user/projects/atlas && grep -v -e '^#' -e '^[[:space:]]*$' package.list | tar --no-recursion --transform 's|^|atlas-1.8.8/|' -cjf /home/user/releases/atlas-1.8.8.tar.bz2 -T - )
( cd /home/user/releases && md5sum atlas-1.8.8.tar.bz2 > atlas-1.8.8.tar.bz2.md5 )
