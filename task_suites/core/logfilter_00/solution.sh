mkdir -p /home/user/triage
awk '$3 == "[db]" && ($2 == "WARN" || $2 == "ERROR")' /home/user/incoming/logs/app.log > /home/user/triage/db_warn_error.log
