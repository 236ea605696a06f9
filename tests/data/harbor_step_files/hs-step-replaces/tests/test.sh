#!/bin/bash
# Step summary's checks (the task's own test.sh): the summary of the settings the step brought.
if [ "$(cat /app/summary.txt 2>/dev/null)" = "EUR 2" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
