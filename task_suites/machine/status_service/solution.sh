echo ok > /srv/status/index.html
cd /srv/status && (nohup python3 -m http.server 8099 --bind 127.0.0.1 > /dev/null 2>&1 &)
for i in $(seq 50); do python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:8099/")' 2>/dev/null && break; sleep 0.1; done
