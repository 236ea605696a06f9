mkdir -p /home/user/reports
awk '$2 == "ERROR" { c = $3; gsub(/[][]/, "", c); n[c]++ } END { for (k in n) print n[k], k }' /home/user/logs/app.log \
  | LC_ALL=C sort -k1,1nr -k2,2 > /home/user/reports/error_counts.txt
