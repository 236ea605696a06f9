set -e
mkdir -p /srv/shopfront/v1 /srv/shopfront/v2 /var/lib/shopfront /root/.ssh
printf 'listen 80\nroot /srv/shopfront/v1\nindex index.html\n' > /etc/shopfront.conf
echo '<h1>v1</h1>' > /srv/shopfront/v1/index.html
echo '<h1>v2</h1>' > /srv/shopfront/v2/index.html
printf 'sessions=41\n' > /var/lib/shopfront/state.db
printf 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE0 ops@shopfront\n' > /root/.ssh/authorized_keys
chmod 700 /root/.ssh; chmod 600 /root/.ssh/authorized_keys
