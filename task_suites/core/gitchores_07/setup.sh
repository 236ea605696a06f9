# Build a small repository with a fixed history (identities and dates), then leave work in it.
R=/home/user/work/umbra
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -C "$R" -c user.name='Zoltan Nakamura' -c user.email='zoltan.nakamura@example.com' -c init.defaultBranch=main -c commit.gpgsign=false -c tag.gpgsign=false "$@"; }
mkdir -p "$R"
g init -q
printf '%s' '# umbra

Inventory service.
' > "$R/README.md"
mkdir -p "$R/src"
printf '%s' 'def main():
    print("umbra")
' > "$R/src/main.py"
mkdir -p "$R/config"
printf '%s' 'service: umbra
port: 9000
log_level: debug
' > "$R/config/app.yaml"
export GIT_AUTHOR_DATE=2024-07-08T11:00:00+00:00 GIT_COMMITTER_DATE=2024-07-08T11:00:00+00:00
g add -A
g commit -q -m 'Initial import'
g branch feature/login
mkdir -p "$R/docs"
printf '%s' 'note 0
' > "$R/docs/0.md"
export GIT_AUTHOR_DATE=2024-07-09T13:00:00+00:00 GIT_COMMITTER_DATE=2024-07-09T13:00:00+00:00
g add -A
g commit -q -m 'Refactor 0'
g branch fix/timeout
mkdir -p "$R/docs"
printf '%s' 'note 1
' > "$R/docs/1.md"
export GIT_AUTHOR_DATE=2024-07-10T15:00:00+00:00 GIT_COMMITTER_DATE=2024-07-10T15:00:00+00:00
g add -A
g commit -q -m 'Update docs 1'
g branch experiment/cache
mkdir -p "$R/docs"
printf '%s' 'note 2
' > "$R/docs/2.md"
export GIT_AUTHOR_DATE=2024-07-11T17:00:00+00:00 GIT_COMMITTER_DATE=2024-07-11T17:00:00+00:00
g add -A
g commit -q -m 'Update docs 2'
mkdir -p "$R/docs"
printf '%s' 'note 3
' > "$R/docs/3.md"
export GIT_AUTHOR_DATE=2024-07-12T19:00:00+00:00 GIT_COMMITTER_DATE=2024-07-12T19:00:00+00:00
g add -A
g commit -q -m 'Tune config 3'
mkdir -p "$R/docs"
printf '%s' 'note 4
' > "$R/docs/4.md"
export GIT_AUTHOR_DATE=2024-07-13T21:00:00+00:00 GIT_COMMITTER_DATE=2024-07-13T21:00:00+00:00
g add -A
g commit -q -m 'Tune config 4'
mkdir -p "$R/docs"
printf '%s' 'note 5
' > "$R/docs/5.md"
export GIT_AUTHOR_DATE=2024-07-14T23:00:00+00:00 GIT_COMMITTER_DATE=2024-07-14T23:00:00+00:00
g add -A
g commit -q -m 'Tune config 5'
g checkout -q -b fix/typo
printf 'wip\n' > "$R/fix_typo.txt"
export GIT_AUTHOR_DATE=2024-07-15T02:00:00+00:00 GIT_COMMITTER_DATE=2024-07-15T02:00:00+00:00
g add -A
g commit -q -m 'WIP fix/typo'
g checkout -q main
g checkout -q -b spike/grpc
printf 'wip\n' > "$R/spike_grpc.txt"
export GIT_AUTHOR_DATE=2024-07-15T05:00:00+00:00 GIT_COMMITTER_DATE=2024-07-15T05:00:00+00:00
g add -A
g commit -q -m 'WIP spike/grpc'
g checkout -q main
g checkout -q -b feature/search
printf 'wip\n' > "$R/feature_search.txt"
export GIT_AUTHOR_DATE=2024-07-15T08:00:00+00:00 GIT_COMMITTER_DATE=2024-07-15T08:00:00+00:00
g add -A
g commit -q -m 'WIP feature/search'
g checkout -q main
