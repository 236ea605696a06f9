#!/bin/bash
# Build the agent's program with make (CC is gcc), then run the tests against the binary.
gcc --version | head -n 1
make -C /app BUILD=/tmp/build CC=gcc || echo "build failed"
pytest "$TEST_DIR/test_mean.py" -rA
