# Build a small git repository with a deterministic history, then leave
# uncommitted work in the tree.
R=/home/user/repo
mkdir -p "$R/config" "$R/src" "$R/notes"
export GIT_AUTHOR_DATE="2024-03-01T09:00:00+00:00" GIT_COMMITTER_DATE="2024-03-01T09:00:00+00:00"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -C "$R" -c user.name="Ana Lead" -c user.email="ana.lead@example.com" -c init.defaultBranch=main -c commit.gpgsign=false "$@"; }
g init -q
printf '# inventory service\n\nSmall service that tracks stock levels.\n' > "$R/README.md"
printf 'service: inventory\nport: 8080\nlog_level: debug\n' > "$R/config/app.yaml"
printf 'def main():\n    print("inventory")\n' > "$R/src/main.py"
g add README.md config/app.yaml src/main.py
g commit -q -m "Initial import"
export GIT_AUTHOR_DATE="2024-03-02T10:30:00+00:00" GIT_COMMITTER_DATE="2024-03-02T10:30:00+00:00"
printf 'def main():\n    print("inventory service")\n' > "$R/src/main.py"
g add src/main.py
g commit -q -m "Improve greeting"
# Uncommitted work
printf 'service: inventory\nport: 8081\nlog_level: info\nreplicas: 2\n' > "$R/config/app.yaml"
printf 'host: db.internal\nport: 5432\nname: inventory\n' > "$R/config/db.yaml"
printf 'def main():\n    print("inventory service")\n    # TODO: read config\n' > "$R/src/main.py"
printf 'remember to ask about replica count\n' > "$R/notes/scratch.txt"
printf 'DEBUG started\nDEBUG stopped\n' > "$R/server.log"
