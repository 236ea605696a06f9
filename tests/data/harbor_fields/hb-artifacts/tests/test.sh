#!/bin/bash
# The grader keeps what it saw in /logs/artifacts, as Harbor's artifact guide describes.
mkdir -p /logs/artifacts/details
expected=$(wc -l < /app/notes.txt | tr -d ' ')
got=$(cat /app/count.txt 2>/dev/null || echo missing)
printf 'expected %s, got %s\n' "$expected" "$got" > /logs/artifacts/summary.txt
cp /app/notes.txt /logs/artifacts/details/notes.txt
ln -s /etc/passwd /logs/artifacts/passwd-link
if [ "$got" = "$expected" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
