#!/usr/bin/env bash
# The project's check: build into a scratch OUT_DIR and compare with the expected report.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
OUT_DIR="$scratch/reports" bash "$here/build.sh" > /dev/null
diff -u "$here/tests/expected_report.txt" "$scratch/reports/report.txt"
echo "PASS"
