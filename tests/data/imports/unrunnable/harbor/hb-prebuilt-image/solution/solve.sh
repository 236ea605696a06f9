#!/bin/bash
echo "id,total" > /app/totals.csv
