# Build a small repository with a fixed history (identities and dates), then leave work in it.
R=/home/user/src/willow
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -C "$R" -c user.name='Nadia Silva' -c user.email='nadia.silva@example.com' -c init.defaultBranch=main -c commit.gpgsign=false -c tag.gpgsign=false "$@"; }
mkdir -p "$R"
g init -q
printf '%s' '# willow

Metrics exporter.
' > "$R/README.md"
mkdir -p "$R/src"
printf '%s' 'def main():
    print("willow")
' > "$R/src/main.py"
mkdir -p "$R/config"
printf '%s' 'service: willow
port: 8080
log_level: debug
' > "$R/config/app.yaml"
printf '%s' '1.3.5
' > "$R/VERSION"
export GIT_AUTHOR_DATE=2024-01-06T11:00:00+00:00 GIT_COMMITTER_DATE=2024-01-06T11:00:00+00:00
g add -A
g commit -q -m 'Initial import'
mkdir -p "$R/src"
printf '%s' 'def main():
    print("willow service")
' > "$R/src/main.py"
export GIT_AUTHOR_DATE=2024-01-07T13:00:00+00:00 GIT_COMMITTER_DATE=2024-01-07T13:00:00+00:00
g add -A
g commit -q -m 'Print service name'
mkdir -p "$R/config"
printf '%s' 'service: willow
port: 8080
log_level: info
replicas: 2
' > "$R/config/app.yaml"
mkdir -p "$R/config"
printf '%s' 'host: queue.internal
port: 6379
' > "$R/config/queue.yaml"
mkdir -p "$R/src"
printf '%s' 'def main():
    print("willow service")
    # TODO: read config
' > "$R/src/main.py"
mkdir -p "$R/notes"
printf '%s' 'ask about replica count
' > "$R/notes/scratch.txt"
printf '%s' 'DEBUG started
' > "$R/server.log"
