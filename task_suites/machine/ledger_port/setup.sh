set -e
mkdir -p /etc/ledger /var/lib/ledger /srv/ledger
printf 'name = ledger\nport = 8080\nworkers = 2\n' > /etc/ledger/ledger.conf
printf 'balance=1200\n' > /var/lib/ledger/state.db
chmod 600 /var/lib/ledger/state.db
printf '2026-11-30 installed\n' > /srv/ledger/CHANGELOG
