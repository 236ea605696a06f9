# Build a small repository with a fixed history (identities and dates), then leave work in it.
R=/home/user/work/orchid
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -C "$R" -c user.name='Dana Tanaka' -c user.email='dana.tanaka@example.com' -c init.defaultBranch=main -c commit.gpgsign=false -c tag.gpgsign=false "$@"; }
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
port: 9000
log_level: debug
' > "$R/config/app.yaml"
printf '%s' '2.6.8
' > "$R/VERSION"
export GIT_AUTHOR_DATE=2024-01-05T11:00:00+00:00 GIT_COMMITTER_DATE=2024-01-05T11:00:00+00:00
g add -A
g commit -q -m 'Initial import'
printf '%s' 'TOKEN=dev-3828
' > "$R/.env"
mkdir -p "$R/build"
printf '%s' 'ELF-ish bytes
' > "$R/build/app.bin"
mkdir -p "$R/src/__pycache__"
printf '%s' 'pyc
' > "$R/src/__pycache__/main.cpython-311.pyc"
export GIT_AUTHOR_DATE=2024-01-06T13:00:00+00:00 GIT_COMMITTER_DATE=2024-01-06T13:00:00+00:00
g add -A
g commit -q -m 'Save local state'
mkdir -p "$R/config"
printf '%s' 'service: orchid
port: 9000
log_level: info
' > "$R/config/app.yaml"
export GIT_AUTHOR_DATE=2024-01-07T15:00:00+00:00 GIT_COMMITTER_DATE=2024-01-07T15:00:00+00:00
g add -A
g commit -q -m 'Lower log level'
