# Give every path of the site a wrong, deterministic mode.
S=/home/user/site
chmod 0600 "$S/index.html"
chmod 0644 "$S/deploy.sh"
chmod 0700 "$S/cgi"
chmod 0644 "$S/cgi/status.py"
chmod 0777 "$S/secrets"
chmod 0664 "$S/secrets/api.key"
chmod 0711 "$S/static"
chmod 0666 "$S/static/site.css"
chmod 0755 "$S/uploads"
chmod 0640 "$S/uploads/README"
chmod 0644 "$S/permissions.txt"
chmod 0755 "$S"
