#!/bin/bash
if python3 -c 'import urllib.request; assert urllib.request.urlopen("http://127.0.0.1:8765", timeout=5).read() == b"ready"'; then
    echo 1 > /logs/verifier/reward.txt
else
    echo 0 > /logs/verifier/reward.txt
fi
