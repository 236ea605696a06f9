#!/bin/bash
# The tests are named *_test.py, so pytest is told the file.
cd /app
pytest "$TEST_DIR/roman_test.py" -rA
