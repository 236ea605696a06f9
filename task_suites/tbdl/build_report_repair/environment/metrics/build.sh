#!/usr/bin/env bash
# Build the sensor report described in README.md.
set -euo pipefail
cd "$(dirname "$0")"

report="$OUT_DIR/report.txt"

count=0
total=0
{
  echo "# sensor report"
  while IFS=, read -r sensor value; do
    if [ "$sensor" = "sensor" ]; then
      continue
    fi
    echo "$sensor $value"
    count=$((count + 1))
    total=$((total + value))
  done < data/readings.csv
  echo "count $count"
  echo "total $total"
  echo "mean $((total / count))"
} > "$report"
echo "wrote $report"
