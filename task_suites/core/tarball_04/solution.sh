mkdir -p /home/user/dist
( cd /home/user/src/atlas && grep -v -e '^#' -e '^[[:space:]]*$' RELEASE_FILES | tar --no-recursion -czf /home/user/dist/atlas-1.0.4.tar.gz -T - )
( cd /home/user/dist && md5sum atlas-1.0.4.tar.gz > atlas-1.0.4.tar.gz.md5 )
