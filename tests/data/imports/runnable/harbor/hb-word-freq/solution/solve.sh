#!/bin/bash
set -euo pipefail
python3 /solution/count.py /app/poem.txt > /app/freq.txt
