(
  cd /home/user/work/willow || return
  export GIT_AUTHOR_NAME='Ops Automation' GIT_AUTHOR_EMAIL=ops-automation@example.net GIT_COMMITTER_NAME='Ops Automation' GIT_COMMITTER_EMAIL=ops-automation@example.net GIT_AUTHOR_DATE=2024-11-14T09:00:00+00:00 GIT_COMMITTER_DATE=2024-11-14T09:00:00+00:00
  v=$(cat VERSION)
  {
    printf '# %s\n\n## Features\n\n' "$v"
    git log --reverse --format=%s v3.1.0..main | sed -n 's/^feat: /- /p'
    printf '\n## Fixes\n\n'
    git log --reverse --format=%s v3.1.0..main | sed -n 's/^fix: /- /p'
  } > CHANGELOG.md
  git add CHANGELOG.md
  git commit -q -m "Release $v"
  git tag -a "v$v" -m "Release $v"
)
