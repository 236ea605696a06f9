(
  cd /home/user/project || return
  export GIT_AUTHOR_NAME="Release Bot" GIT_AUTHOR_EMAIL="release-bot@example.com"
  export GIT_COMMITTER_NAME="Release Bot" GIT_COMMITTER_EMAIL="release-bot@example.com"
  ticket=/home/user/tickets/REL-204.txt
  # 1. the last commit on main that touched bucket.py deleted it; its parent holds the version to restore
  deleted_in=$(git rev-list -n 1 --first-parent main -- src/ratelim/bucket.py)
  git checkout "$deleted_in^" -- src/ratelim/bucket.py
  export GIT_AUTHOR_DATE="2024-03-01T12:00:00+00:00" GIT_COMMITTER_DATE="2024-03-01T12:00:00+00:00"
  git commit -q -m "Restore bucket module" -- src/ratelim/bucket.py
  # 2. the artefact patterns from the ticket
  awk '/^Artefact patterns/ { on = 1; next } on && /^    / { sub(/^    /, ""); print; next } on { exit }' "$ticket" > .gitignore
  git add .gitignore
  export GIT_AUTHOR_DATE="2024-03-01T12:05:00+00:00" GIT_COMMITTER_DATE="2024-03-01T12:05:00+00:00"
  git commit -q -m "Ignore build artefacts"
  # 3. the annotated release tag
  tag=$(sed -n 's/^Release tag: *//p' "$ticket")
  message=$(sed -n 's/^Tag message: *//p' "$ticket")
  export GIT_COMMITTER_DATE="2024-03-01T12:10:00+00:00"
  git tag -a "$tag" -m "$message"
  # 4. the lost hotfix: an unreachable commit with the right subject
  for c in $(git fsck --unreachable --no-reflogs 2>/dev/null | awk '$2 == "commit" { print $3 }'); do
    if [ "$(git log -1 --format=%s "$c")" = "Clamp negative refill rate" ]; then
      git branch hotfix/clamp-refill "$c"
    fi
  done
)
