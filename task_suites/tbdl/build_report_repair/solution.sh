# Repair build.sh layer by layer: default OUT_DIR, create it, read a last line without a
# newline, and print the mean with two decimals, halves rounded up (integer arithmetic).
(
cd /home/user/metrics || return
cat > build.sh <<'EOF'
#!/usr/bin/env bash
# Build the sensor report described in README.md.
set -euo pipefail
cd "$(dirname "$0")"

OUT_DIR="${OUT_DIR:-out}"
mkdir -p "$OUT_DIR"
report="$OUT_DIR/report.txt"

count=0
total=0
{
  echo "# sensor report"
  while IFS=, read -r sensor value || [ -n "$sensor" ]; do
    if [ "$sensor" = "sensor" ]; then
      continue
    fi
    echo "$sensor $value"
    count=$((count + 1))
    total=$((total + 10#$value))
  done < data/readings.csv
  echo "count $count"
  echo "total $total"
  hundredths=$(( (total * 200 + count) / (2 * count) ))
  printf 'mean %d.%02d\n' $((hundredths / 100)) $((hundredths % 100))
} > "$report"
echo "wrote $report"
EOF
bash build.sh
bash tests/run.sh
)
