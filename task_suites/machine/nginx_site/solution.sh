sed -i 's#^root /srv/shopfront/v1$#root /srv/shopfront/v2#' /etc/shopfront.conf
