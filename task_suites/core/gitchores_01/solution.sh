(
  cd /home/user/work/orchid || return
  export GIT_AUTHOR_NAME='Ops Automation' GIT_AUTHOR_EMAIL=ops-automation@example.net GIT_COMMITTER_NAME='Ops Automation' GIT_COMMITTER_EMAIL=ops-automation@example.net GIT_AUTHOR_DATE=2024-08-22T09:00:00+00:00 GIT_COMMITTER_DATE=2024-08-22T09:00:00+00:00
  git rm -q --cached -- .env logs/app.log src/__pycache__/main.cpython-311.pyc
  printf '.env\n*.log\n__pycache__/\n' > .gitignore
  git add .gitignore
  git commit -q -m 'Stop tracking generated files'
  git tag "v$(cat VERSION)"
)
