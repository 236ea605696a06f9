# Build a small repository with a fixed history (identities and dates), then leave work in it.
R=/home/user/src/iris
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -C "$R" -c user.name='Rosa Petrov' -c user.email='rosa.petrov@example.com' -c init.defaultBranch=main -c commit.gpgsign=false -c tag.gpgsign=false "$@"; }
mkdir -p "$R"
g init -q
printf '%s' '# iris

Inventory service.
' > "$R/README.md"
mkdir -p "$R/src"
printf '%s' 'def main():
    print("iris")
' > "$R/src/main.py"
mkdir -p "$R/config"
printf '%s' 'service: iris
port: 8000
log_level: debug
' > "$R/config/app.yaml"
export GIT_AUTHOR_DATE=2024-06-20T11:00:00+00:00 GIT_COMMITTER_DATE=2024-06-20T11:00:00+00:00
g add -A
g commit -q -m 'Initial import'
g branch feature/search
mkdir -p "$R/docs"
printf '%s' 'note 0
' > "$R/docs/0.md"
export GIT_AUTHOR_DATE=2024-06-21T13:00:00+00:00 GIT_COMMITTER_DATE=2024-06-21T13:00:00+00:00
g add -A
g commit -q -m 'Add test 0'
g branch spike/grpc
mkdir -p "$R/docs"
printf '%s' 'note 1
' > "$R/docs/1.md"
export GIT_AUTHOR_DATE=2024-06-22T15:00:00+00:00 GIT_COMMITTER_DATE=2024-06-22T15:00:00+00:00
g add -A
g commit -q -m 'Tune config 1'
g branch old/prototype
mkdir -p "$R/docs"
printf '%s' 'note 2
' > "$R/docs/2.md"
export GIT_AUTHOR_DATE=2024-06-23T17:00:00+00:00 GIT_COMMITTER_DATE=2024-06-23T17:00:00+00:00
g add -A
g commit -q -m 'Refactor 2'
mkdir -p "$R/docs"
printf '%s' 'note 3
' > "$R/docs/3.md"
export GIT_AUTHOR_DATE=2024-06-24T19:00:00+00:00 GIT_COMMITTER_DATE=2024-06-24T19:00:00+00:00
g add -A
g commit -q -m 'Update docs 3'
mkdir -p "$R/docs"
printf '%s' 'note 4
' > "$R/docs/4.md"
export GIT_AUTHOR_DATE=2024-06-25T21:00:00+00:00 GIT_COMMITTER_DATE=2024-06-25T21:00:00+00:00
g add -A
g commit -q -m 'Refactor 4'
mkdir -p "$R/docs"
printf '%s' 'note 5
' > "$R/docs/5.md"
export GIT_AUTHOR_DATE=2024-06-26T23:00:00+00:00 GIT_COMMITTER_DATE=2024-06-26T23:00:00+00:00
g add -A
g commit -q -m 'Update docs 5'
g checkout -q -b fix/timeout
printf 'wip\n' > "$R/fix_timeout.txt"
export GIT_AUTHOR_DATE=2024-06-27T02:00:00+00:00 GIT_COMMITTER_DATE=2024-06-27T02:00:00+00:00
g add -A
g commit -q -m 'WIP fix/timeout'
g checkout -q main
g checkout -q -b fix/typo
printf 'wip\n' > "$R/fix_typo.txt"
export GIT_AUTHOR_DATE=2024-06-27T05:00:00+00:00 GIT_COMMITTER_DATE=2024-06-27T05:00:00+00:00
g add -A
g commit -q -m 'WIP fix/typo'
g checkout -q main
g checkout -q -b experiment/cache
printf 'wip\n' > "$R/experiment_cache.txt"
export GIT_AUTHOR_DATE=2024-06-27T08:00:00+00:00 GIT_COMMITTER_DATE=2024-06-27T08:00:00+00:00
g add -A
g commit -q -m 'WIP experiment/cache'
g checkout -q main
