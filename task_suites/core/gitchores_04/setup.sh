# Build a small repository with a fixed history (identities and dates), then leave work in it.
R=/home/user/ember
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -C "$R" -c user.name='Lena Larsen' -c user.email='lena.larsen@example.com' -c init.defaultBranch=main -c commit.gpgsign=false -c tag.gpgsign=false "$@"; }
mkdir -p "$R"
g init -q
printf '%s' '# ember

Inventory service.
' > "$R/README.md"
mkdir -p "$R/src"
printf '%s' 'def main():
    print("ember")
' > "$R/src/main.py"
mkdir -p "$R/config"
printf '%s' 'service: ember
port: 9000
log_level: debug
' > "$R/config/app.yaml"
printf '%s' '1.0.5
' > "$R/VERSION"
export GIT_AUTHOR_DATE=2024-05-13T11:00:00+00:00 GIT_COMMITTER_DATE=2024-05-13T11:00:00+00:00
g add -A
g commit -q -m 'Initial import'
mkdir -p "$R/src"
printf '%s' 'def main():
    print("ember service")
' > "$R/src/main.py"
export GIT_AUTHOR_DATE=2024-05-14T13:00:00+00:00 GIT_COMMITTER_DATE=2024-05-14T13:00:00+00:00
g add -A
g commit -q -m 'Print service name'
mkdir -p "$R/config"
printf '%s' 'service: ember
port: 9000
log_level: info
replicas: 4
' > "$R/config/app.yaml"
mkdir -p "$R/config"
printf '%s' 'host: db.internal
port: 6379
' > "$R/config/db.yaml"
mkdir -p "$R/src"
printf '%s' 'def main():
    print("ember service")
    # TODO: read config
' > "$R/src/main.py"
mkdir -p "$R/notes"
printf '%s' 'remember the staging deploy
' > "$R/notes/scratch.txt"
printf '%s' 'DEBUG started
' > "$R/server.log"
