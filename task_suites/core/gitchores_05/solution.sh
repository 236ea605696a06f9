(
  cd /home/user/work/orchid || return
  export GIT_AUTHOR_NAME='Release Bot' GIT_AUTHOR_EMAIL=release-bot@example.com GIT_COMMITTER_NAME='Release Bot' GIT_COMMITTER_EMAIL=release-bot@example.com GIT_AUTHOR_DATE=2024-02-13T09:00:00+00:00 GIT_COMMITTER_DATE=2024-02-13T09:00:00+00:00
  git rm -q --cached -- .env build/app.bin src/__pycache__/main.cpython-311.pyc
  printf '.env\nbuild/\n__pycache__/\n' > .gitignore
  git add .gitignore
  git commit -q -m 'Untrack build artifacts and secrets'
  git tag "v$(cat VERSION)"
)
