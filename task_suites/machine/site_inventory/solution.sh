tail -n +2 /var/www/site/data/pages.csv | awk -F, '{n[$2]++; b[$2]+=$3} END {for (s in n) print s, n[s], b[s]}' | sort > /var/www/site/out/sections.txt
