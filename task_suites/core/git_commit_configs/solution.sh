(
  cd /home/user/repo || return
  git config user.name "Dev Bot"
  git config user.email "devbot@example.com"
  export GIT_AUTHOR_DATE="2024-03-05T12:00:00+00:00" GIT_COMMITTER_DATE="2024-03-05T12:00:00+00:00"
  git add -- config/app.yaml config/db.yaml
  git commit -q -m "Update service configuration" -- config/app.yaml config/db.yaml
  printf '*.log\n' > .gitignore
  git add -- .gitignore
  export GIT_AUTHOR_DATE="2024-03-05T12:05:00+00:00" GIT_COMMITTER_DATE="2024-03-05T12:05:00+00:00"
  git commit -q -m "Ignore log files" -- .gitignore
  git tag v1.1
)
