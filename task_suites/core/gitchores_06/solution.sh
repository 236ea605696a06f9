(
  cd /home/user/src/quartz || return
  export GIT_AUTHOR_NAME='Dev Bot' GIT_AUTHOR_EMAIL=devbot@example.com GIT_COMMITTER_NAME='Dev Bot' GIT_COMMITTER_EMAIL=devbot@example.com GIT_AUTHOR_DATE=2024-08-15T09:00:00+00:00 GIT_COMMITTER_DATE=2024-08-15T09:00:00+00:00
  v=$(cat VERSION)
  {
    printf '# %s\n\n## Features\n\n' "$v"
    git log --reverse --format=%s v1.3.0..main | sed -n 's/^feat: /- /p'
    printf '\n## Fixes\n\n'
    git log --reverse --format=%s v1.3.0..main | sed -n 's/^fix: /- /p'
  } > CHANGELOG.md
  git add CHANGELOG.md
  git commit -q -m "Release $v"
  git tag -a "v$v" -m "Release $v"
)
