#!/bin/bash
# Compile the agent's class with the hidden checks, then run each check under pytest.
javac -version
pytest "$TEST_DIR/test_temperature.py" -rA
