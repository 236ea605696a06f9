#!/bin/bash
# Step create's checks, over the task's tests/ (lib.sh comes from there).
. /tests/lib.sh
if [ "$(cat /app/steps.log 2>/dev/null)" = "$EXPECTED" ]; then reward 1; else reward 0; fi
