#!/bin/bash
awk -F' = ' '$1 == "currency" { c = $2 } $1 == "rounding" { r = $2 } END { print c, r }' /app/settings.ini > /app/summary.txt
