#!/bin/bash
# The usual shape: fetch curl and uv, make a venv, install pytest, run the tests.
apt-get update
apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh
source $HOME/.local/bin/env
uv venv .tbench-testing
source .tbench-testing/bin/activate
uv pip install pytest==8.4.1
# The tests are named *_test.py and checked in a copy of the module.
cp /app/slug.py /tmp/slug_under_test.py 2>/dev/null
uv run pytest $TEST_DIR/slug_test.py -rA
