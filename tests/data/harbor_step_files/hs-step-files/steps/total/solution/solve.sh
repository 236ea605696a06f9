#!/bin/bash
total=$(awk -F, 'NR > 1 { s += $2 } END { printf "%.2f", s }' /app/data/prices.csv)
echo "$total $(cat /app/data/currency.txt)" > /app/report/total.txt
