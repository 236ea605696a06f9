mkdir -p /home/user/out
awk -F',' -v OFS=',' -v removed=/home/user/out/duplicates_removed.txt '
  NR == 1 { print; next }
  {
    e = tolower($2); gsub(/^ +| +$/, "", e)
    if (e in seen) { dropped++; next }
    seen[e] = 1; $2 = e; print
  }
  END { print dropped + 0 > removed }
' /home/user/data/contacts.csv > /home/user/out/contacts_dedup.csv
