mkdir -p /home/user/dist
( cd /home/user/code/umbra && grep -v -e '^#' -e '^[[:space:]]*$' MANIFEST | tar --no-recursion -cjf /home/user/dist/umbra-3.5.5.tar.bz2 -T - )
( cd /home/user/dist && md5sum umbra-3.5.5.tar.bz2 > umbra-3.5.5.tar.bz2.md5 )
