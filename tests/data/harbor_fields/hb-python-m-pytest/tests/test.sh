#!/bin/bash
# The grader asks its interpreter for pytest, as many Harbor graders do.
mkdir -p /logs/verifier
python3 -m pytest /tests/test_outputs.py -rA
status=$?
python3 -c 'import sys; print("python3 itself still runs:", sys.version_info[0])'
if [ $status -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
