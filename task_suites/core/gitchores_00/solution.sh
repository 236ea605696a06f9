(
  cd /home/user/src/willow || return
  export GIT_AUTHOR_NAME='Release Bot' GIT_AUTHOR_EMAIL=release-bot@example.com GIT_COMMITTER_NAME='Release Bot' GIT_COMMITTER_EMAIL=release-bot@example.com GIT_AUTHOR_DATE=2024-02-14T09:00:00+00:00 GIT_COMMITTER_DATE=2024-02-14T09:00:00+00:00
  printf '1.3.6\n' > VERSION
  git add -- config/app.yaml config/queue.yaml VERSION
  git commit -q -m 'Prepare config for rollout' -- config/app.yaml config/queue.yaml VERSION
  git tag -a v1.3.6 -m 'Release 1.3.6'
)
