awk '{print $9}' /srv/weblogs/logs/access.log | sort | uniq -c | awk '{print $2, $1}' > /srv/weblogs/reports/status_counts.txt
