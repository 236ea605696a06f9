(
  cd /home/user/ember || return
  export GIT_AUTHOR_NAME='Dev Bot' GIT_AUTHOR_EMAIL=devbot@example.com GIT_COMMITTER_NAME='Dev Bot' GIT_COMMITTER_EMAIL=devbot@example.com GIT_AUTHOR_DATE=2024-06-21T09:00:00+00:00 GIT_COMMITTER_DATE=2024-06-21T09:00:00+00:00
  printf '1.0.6\n' > VERSION
  git add -- config/app.yaml config/db.yaml VERSION
  git commit -q -m 'Update service configuration' -- config/app.yaml config/db.yaml VERSION
  git tag v1.0.6
)
