#!/bin/bash
sed -i 's/^listen=8080$/listen=9090/' /etc/shopd/shopd.conf
echo "port changed to 9090" >> /srv/shop/CHANGELOG
