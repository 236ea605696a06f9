sed -i 's/^port = 8080$/port = 8081/' /etc/ledger/ledger.conf
echo 'port 8080 -> 8081' >> /srv/ledger/CHANGELOG
