mkdir -p /home/user/out
jq -r '[.users[] | select(.active == true) | select(.roles | index("admin")) | .email | ascii_downcase] | unique | .[]' \
  /home/user/data/users.json > /home/user/out/admin_emails.txt
jq -S '[.users[] | select(.active == true) | .roles[]] | group_by(.) | map({key: .[0], value: length}) | from_entries' \
  /home/user/data/users.json > /home/user/out/role_counts.json
