#!/bin/bash
# The task's own test.sh: the checks of every step without one of its own (here: extend).
. /tests/lib.sh
if [ "$(cat /app/steps.log 2>/dev/null)" = "$(printf 'first\nsecond')" ]; then reward 1; else reward 0; fi
