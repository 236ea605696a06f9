# Build ~/project: a deterministic history in which src/ratelim/bucket.py changes three times,
# is deleted on main, has a diverging version on the legacy branch, and two unreachable commits
# (one of them the hotfix to rescue). Untracked build artefacts lie in the working tree.
R=/home/user/project
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null TZ=UTC
g() { git -C "$R" -c user.name="Mara Quinn" -c user.email="mara.quinn@example.com" -c init.defaultBranch=main \
      -c commit.gpgsign=false -c core.hooksPath=/dev/null "$@"; }
at() { export GIT_AUTHOR_DATE="$1T09:30:00+00:00" GIT_COMMITTER_DATE="$1T09:30:00+00:00"; }
mkdir -p "$R"
g init -q
mkdir -p "$R/src/ratelim" "$R/tests"

# --- commit 1
at 2024-01-08
cat > "$R/README.md" <<'TXT'
# ratelim

Request rate limiting for the shop services.
TXT
cat > "$R/src/ratelim/__init__.py" <<'TXT'
from .bucket import Bucket
from .core import Limiter

__all__ = ["Bucket", "Limiter"]
TXT
cat > "$R/src/ratelim/core.py" <<'TXT'
"""Per-client limiter built on buckets."""


class Limiter:
    def __init__(self, factory):
        self.factory = factory
        self.buckets = {}

    def allow(self, client):
        bucket = self.buckets.setdefault(client, self.factory())
        return bucket.take()
TXT
cat > "$R/src/ratelim/bucket.py" <<'TXT'
"""Fixed-window request counter."""


class Bucket:
    def __init__(self, limit):
        self.limit = limit
        self.used = 0

    def take(self):
        if self.used >= self.limit:
            return False
        self.used += 1
        return True
TXT
cat > "$R/tests/test_core.py" <<'TXT'
from ratelim import Limiter


def test_allow():
    class Always:
        def take(self):
            return True

    assert Limiter(Always).allow("a")
TXT
g add -A && g commit -q -m "Initial import"

# --- commit 2
at 2024-01-15
cat > "$R/src/ratelim/bucket.py" <<'TXT'
"""Token bucket with a burst allowance."""


class Bucket:
    def __init__(self, rate, burst):
        self.rate = rate
        self.burst = burst
        self.tokens = burst

    def refill(self):
        self.tokens = min(self.burst, self.tokens + self.rate)

    def take(self, n=1):
        if self.tokens < n:
            return False
        self.tokens -= n
        return True
TXT
g commit -q -am "bucket: token bucket with burst"
C2=$(g rev-parse HEAD)

# --- commit 3: the version that was last on main
at 2024-01-22
cat > "$R/src/ratelim/bucket.py" <<'TXT'
"""Token bucket with a burst allowance, refilled by elapsed time."""

import time


class Bucket:
    def __init__(self, rate, burst, clock=time.monotonic):
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.clock = clock
        self.stamp = clock()

    def refill(self):
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self, n=1):
        self.refill()
        if self.tokens < n:
            return False
        self.tokens -= n
        return True
TXT
g commit -q -am "bucket: refill by elapsed time"

# --- two side branches off commit 3, deleted later: their commits become unreachable
at 2024-01-25
g checkout -q -b hotfix/clamp
sed -i 's/^        self.rate = rate$/        self.rate = max(0.0, rate)/' "$R/src/ratelim/bucket.py"
g commit -q -am "Clamp negative refill rate"
at 2024-01-26
g checkout -q -b wip/leaky main
cat > "$R/src/ratelim/bucket.py" <<'TXT'
"""Leaky bucket (experiment, do not ship)."""


class Bucket:
    def __init__(self, capacity):
        self.capacity = capacity
        self.level = 0

    def take(self):
        if self.level >= self.capacity:
            return False
        self.level += 1
        return True
TXT
g commit -q -am "WIP: leaky bucket experiment"
g checkout -q main

# --- commit 4: the deletion
at 2024-02-02
g rm -q src/ratelim/bucket.py
cat > "$R/src/ratelim/__init__.py" <<'TXT'
from .core import Limiter

__all__ = ["Limiter"]
TXT
g commit -q -am "Drop bucket module (moved to gateway)"

# --- commits 5 and 6
at 2024-02-09
cat >> "$R/src/ratelim/core.py" <<'TXT'

    def reset(self, client):
        self.buckets.pop(client, None)
TXT
g commit -q -am "core: allow resetting a client"
at 2024-02-16
printf '\nBuckets now live in the gateway.\n' >> "$R/README.md"
g commit -q -am "README: mention the gateway"

# --- legacy branch from commit 2, with its own later bucket.py
at 2024-02-20
g checkout -q -b legacy "$C2"
sed -i 's/^        self.tokens = burst$/        self.tokens = int(burst)  # 1.x keeps integer tokens/' "$R/src/ratelim/bucket.py"
g commit -q -am "legacy: integer tokens for 1.x"
g checkout -q main

# --- lose the side branches and every reflog entry
g branch -q -D hotfix/clamp wip/leaky
g reflog expire --expire=now --expire-unreachable=now --all

# --- untracked build artefacts and a checklist
mkdir -p "$R/build/lib/ratelim" "$R/dist" "$R/src/ratelim/__pycache__" "$R/notes"
cp "$R/src/ratelim/core.py" "$R/src/ratelim/__init__.py" "$R/build/lib/ratelim/"
printf 'ratelim-1.4.0/PKG-INFO\nName: ratelim\nVersion: 1.4.0\n' | gzip -n > "$R/dist/ratelim-1.4.0.tar.gz"
printf '\xa7\r\r\n\x00\x00\x00\x00compiled ratelim.core\n' > "$R/src/ratelim/__pycache__/core.cpython-311.pyc"
printf 'SQLite format 3\x00 (coverage data)\n' > "$R/.coverage"
printf '# 2.0.0 checklist\n\n- [ ] bucket.py back\n- [ ] tag\n- [ ] announce in #shop-dev\n' > "$R/notes/release-checklist.md"
unset GIT_AUTHOR_DATE GIT_COMMITTER_DATE
