#!/bin/bash
awk '{ s += $1 } END { print s }' /app/input/numbers.txt > /app/total.txt
