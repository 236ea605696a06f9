# Build a small repository with a fixed history (identities and dates), then leave work in it.
R=/home/user/work/willow
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -C "$R" -c user.name='Zoltan Okafor' -c user.email='zoltan.okafor@example.com' -c init.defaultBranch=main -c commit.gpgsign=false -c tag.gpgsign=false "$@"; }
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
printf '%s' '3.1.0
' > "$R/VERSION"
export GIT_AUTHOR_DATE=2024-10-06T11:00:00+00:00 GIT_COMMITTER_DATE=2024-10-06T11:00:00+00:00
g add -A
g commit -q -m 'Initial import'
g tag v3.1.0
mkdir -p "$R/notes"
printf '%s' 'chore: bump dependencies
' > "$R/notes/0.txt"
export GIT_AUTHOR_DATE=2024-10-07T13:00:00+00:00 GIT_COMMITTER_DATE=2024-10-07T13:00:00+00:00
g add -A
g commit -q -m 'chore: bump dependencies'
mkdir -p "$R/notes"
printf '%s' 'chore: reformat code
' > "$R/notes/1.txt"
export GIT_AUTHOR_DATE=2024-10-08T15:00:00+00:00 GIT_COMMITTER_DATE=2024-10-08T15:00:00+00:00
g add -A
g commit -q -m 'chore: reformat code'
mkdir -p "$R/notes"
printf '%s' 'docs: explain setup
' > "$R/notes/2.txt"
export GIT_AUTHOR_DATE=2024-10-09T17:00:00+00:00 GIT_COMMITTER_DATE=2024-10-09T17:00:00+00:00
g add -A
g commit -q -m 'docs: explain setup'
mkdir -p "$R/notes"
printf '%s' 'fix: handle empty config
' > "$R/notes/3.txt"
export GIT_AUTHOR_DATE=2024-10-10T19:00:00+00:00 GIT_COMMITTER_DATE=2024-10-10T19:00:00+00:00
g add -A
g commit -q -m 'fix: handle empty config'
mkdir -p "$R/notes"
printf '%s' 'fix: retry on timeout
' > "$R/notes/4.txt"
export GIT_AUTHOR_DATE=2024-10-11T21:00:00+00:00 GIT_COMMITTER_DATE=2024-10-11T21:00:00+00:00
g add -A
g commit -q -m 'fix: retry on timeout'
printf '%s' '3.2.0
' > "$R/VERSION"
export GIT_AUTHOR_DATE=2024-10-12T23:00:00+00:00 GIT_COMMITTER_DATE=2024-10-12T23:00:00+00:00
g add -A
g commit -q -m 'Bump version to 3.2.0'
