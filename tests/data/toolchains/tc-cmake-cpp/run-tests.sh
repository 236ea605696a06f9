#!/bin/bash
# Configure and build the agent's library with CMake and the hidden checks, then run them under pytest.
cmake --version | head -n 1
pytest "$TEST_DIR/test_clamp.py" -rA
