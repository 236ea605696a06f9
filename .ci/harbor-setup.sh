#!/usr/bin/env bash
# Harbor (the [harbor] extra) needs Python 3.12: a second virtual environment, .venv-harbor,
# with harbor==0.25.0 and this project installed editable, for the Harbor integration tests
# and benchmark (tests/integration/test_harbor_*.py, benchmarks/bench_harbor.py). Idempotent:
# a venv that already imports harbor 0.25.0 and pytest_termrl is left as it is.
#
# Environment: HARBOR_VENV (default .venv-harbor, relative to the repository root),
# HARBOR_PYTHON (a CPython 3.12 interpreter; default: pyenv's newest 3.12, else python3.12 on PATH).
# Fails (exit 1) naming what is missing: CI must fail here, never skip the Harbor tests.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${HARBOR_VENV:-.venv-harbor}
WANT=0.25.0
say() { printf '[harbor-setup] %s\n' "$*" >&2; }

ready() {
  [ -x "$VENV/bin/python" ] && "$VENV/bin/python" - "$WANT" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
import harbor, pytest_termrl  # noqa: F401
sys.exit(0 if version("harbor") == sys.argv[1] else 1)
PY
}

if ready; then
  say "ready: $VENV has harbor $WANT and pytest_termrl"
  exit 0
fi

find_python() {
  if [ -n "${HARBOR_PYTHON:-}" ]; then
    echo "$HARBOR_PYTHON"; return 0
  fi
  if command -v pyenv >/dev/null; then
    local root v
    root=$(pyenv root)
    v=$(ls -1 "$root/versions" 2>/dev/null | grep -E '^3\.12\.[0-9]+$' | sort -t. -k3,3n | tail -n 1 || true)
    if [ -n "$v" ] && [ -x "$root/versions/$v/bin/python3.12" ]; then
      echo "$root/versions/$v/bin/python3.12"; return 0
    fi
  fi
  command -v python3.12 || return 1
}

PY=$(find_python) || {
  say "no CPython 3.12 found: Harbor $WANT needs Python >= 3.12 (install one with 'pyenv install 3.12', or set HARBOR_PYTHON)"
  exit 1
}
"$PY" -c 'import sys; assert sys.version_info[:2] >= (3, 12), sys.version' || {
  say "$PY is not Python >= 3.12"; exit 1
}

if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV with $PY"
  "$PY" -m venv "$VENV"
fi
say "installing harbor==$WANT and this project (editable, extras harbor and docker) into $VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
"$VENV/bin/python" -m pip install --quiet "harbor==$WANT" -e '.[harbor,docker]'
ready || { say "$VENV does not import harbor $WANT and pytest_termrl after installing"; exit 1; }
say "ready: $VENV ($("$VENV/bin/python" -V), harbor $WANT)"
