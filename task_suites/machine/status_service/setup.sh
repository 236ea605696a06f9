set -e
mkdir -p /srv/status /var/log/status
echo 'placeholder' > /srv/status/README
