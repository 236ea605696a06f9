#!/bin/bash
# Build the agent's program, then run the tests against the binary.
mkdir -p /tmp/build
gcc -O1 -o /tmp/build/wc /app/wc.c || echo "build failed"
pytest "$TEST_DIR/test_wc.py" -rA
