mkdir -p /home/user/dist
( cd /home/user/code/lumen && grep -v -e '^#' -e '^[[:space:]]*$' dist-files.txt | tar --no-recursion --transform 's|^|lumen-1.10.3/|' -czf /home/user/dist/lumen-1.10.3.tar.gz -T - )
( cd /home/user/dist && md5sum lumen-1.10.3.tar.gz > lumen-1.10.3.tar.gz.md5 )
