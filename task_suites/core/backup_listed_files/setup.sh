chmod 0755 /home/user/projects/alpha/main.py
chmod 0600 /home/user/docs/budget.csv
chmod 0644 /home/user/docs/report.md /home/user/projects/alpha/lib/util.py /home/user/projects/alpha/README.md /home/user/.profile_extra /home/user/backup.list
