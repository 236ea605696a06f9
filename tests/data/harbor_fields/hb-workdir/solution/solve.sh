#!/bin/bash
awk -F, -v col="$COLUMN" 'NR > 1 { s += $col } END { print s }' data.csv > total.txt
