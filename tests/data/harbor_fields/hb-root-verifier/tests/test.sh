#!/bin/bash
# The grader runs as root and keeps its scratch outside the workdir, as a root grader in an image does.
mkdir -p /var/lib/grader && id -u > /var/lib/grader/uid
if [ "$(cat /var/lib/grader/uid)" = "0" ] && [ "$(cat /app/status.txt 2>/dev/null)" = "ready" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
