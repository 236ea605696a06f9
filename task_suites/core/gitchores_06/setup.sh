# Build a small repository with a fixed history (identities and dates), then leave work in it.
R=/home/user/src/quartz
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -C "$R" -c user.name='Emeka Costa' -c user.email='emeka.costa@example.com' -c init.defaultBranch=main -c commit.gpgsign=false -c tag.gpgsign=false "$@"; }
mkdir -p "$R"
g init -q
printf '%s' '# quartz

Metrics exporter.
' > "$R/README.md"
mkdir -p "$R/src"
printf '%s' 'def main():
    print("quartz")
' > "$R/src/main.py"
mkdir -p "$R/config"
printf '%s' 'service: quartz
port: 8000
log_level: debug
' > "$R/config/app.yaml"
printf '%s' '1.3.0
' > "$R/VERSION"
export GIT_AUTHOR_DATE=2024-07-07T11:00:00+00:00 GIT_COMMITTER_DATE=2024-07-07T11:00:00+00:00
g add -A
g commit -q -m 'Initial import'
g tag v1.3.0
mkdir -p "$R/notes"
printf '%s' 'fix: handle empty config
' > "$R/notes/0.txt"
export GIT_AUTHOR_DATE=2024-07-08T13:00:00+00:00 GIT_COMMITTER_DATE=2024-07-08T13:00:00+00:00
g add -A
g commit -q -m 'fix: handle empty config'
mkdir -p "$R/notes"
printf '%s' 'fix: retry on timeout
' > "$R/notes/1.txt"
export GIT_AUTHOR_DATE=2024-07-09T15:00:00+00:00 GIT_COMMITTER_DATE=2024-07-09T15:00:00+00:00
g add -A
g commit -q -m 'fix: retry on timeout'
mkdir -p "$R/notes"
printf '%s' 'feat: add health endpoint
' > "$R/notes/2.txt"
export GIT_AUTHOR_DATE=2024-07-10T17:00:00+00:00 GIT_COMMITTER_DATE=2024-07-10T17:00:00+00:00
g add -A
g commit -q -m 'feat: add health endpoint'
mkdir -p "$R/notes"
printf '%s' 'feat: add --dry-run flag
' > "$R/notes/3.txt"
export GIT_AUTHOR_DATE=2024-07-11T19:00:00+00:00 GIT_COMMITTER_DATE=2024-07-11T19:00:00+00:00
g add -A
g commit -q -m 'feat: add --dry-run flag'
mkdir -p "$R/notes"
printf '%s' 'chore: reformat code
' > "$R/notes/4.txt"
export GIT_AUTHOR_DATE=2024-07-12T21:00:00+00:00 GIT_COMMITTER_DATE=2024-07-12T21:00:00+00:00
g add -A
g commit -q -m 'chore: reformat code'
printf '%s' '1.4.0
' > "$R/VERSION"
export GIT_AUTHOR_DATE=2024-07-13T23:00:00+00:00 GIT_COMMITTER_DATE=2024-07-13T23:00:00+00:00
g add -A
g commit -q -m 'Bump version to 1.4.0'
