#!/bin/bash
cat > /app/serve.py <<'PY'
import http.server


class Ready(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ready")


http.server.HTTPServer(("127.0.0.1", 8765), Ready).serve_forever()
PY
nohup python3 /app/serve.py > /dev/null 2>&1 &
for _ in $(seq 50); do
    python3 -c 'import socket; socket.create_connection(("127.0.0.1", 8765), 1)' 2>/dev/null && break
    sleep 0.1
done
