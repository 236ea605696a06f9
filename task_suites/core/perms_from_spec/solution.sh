while read -r mode path; do
  case "$mode" in ''|'#'*) continue ;; esac
  chmod "$mode" "/home/user/site/$path"
done < /home/user/site/permissions.txt
