# Build a small repository with a fixed history (identities and dates), then leave work in it.
R=/home/user/work/orchid
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -C "$R" -c user.name='Nadia Tanaka' -c user.email='nadia.tanaka@example.com' -c init.defaultBranch=main -c commit.gpgsign=false -c tag.gpgsign=false "$@"; }
mkdir -p "$R"
g init -q
printf '%s' '# orchid

Metrics exporter.
' > "$R/README.md"
mkdir -p "$R/src"
printf '%s' 'def main():
    print("orchid")
' > "$R/src/main.py"
mkdir -p "$R/config"
printf '%s' 'service: orchid
port: 8080
log_level: debug
' > "$R/config/app.yaml"
printf '%s' '2.10.0
' > "$R/VERSION"
export GIT_AUTHOR_DATE=2024-07-14T11:00:00+00:00 GIT_COMMITTER_DATE=2024-07-14T11:00:00+00:00
g add -A
g commit -q -m 'Initial import'
mkdir -p "$R/logs"
printf '%s' 'DEBUG x
' > "$R/logs/app.log"
printf '%s' 'TOKEN=dev-6549
' > "$R/.env"
mkdir -p "$R/src/__pycache__"
printf '%s' 'pyc
' > "$R/src/__pycache__/main.cpython-311.pyc"
export GIT_AUTHOR_DATE=2024-07-15T13:00:00+00:00 GIT_COMMITTER_DATE=2024-07-15T13:00:00+00:00
g add -A
g commit -q -m 'Save local state'
mkdir -p "$R/config"
printf '%s' 'service: orchid
port: 8080
log_level: info
' > "$R/config/app.yaml"
export GIT_AUTHOR_DATE=2024-07-16T15:00:00+00:00 GIT_COMMITTER_DATE=2024-07-16T15:00:00+00:00
g add -A
g commit -q -m 'Lower log level'
