#!/bin/bash
set -euo pipefail
mkdir -p /app/reports
awk -F, 'NR > 1 { s += $3 } END { printf "%.2f\n", s }' /app/sales.csv > /app/reports/total.txt
