#!/bin/bash
pip install pytest==8.3.4
pytest $TEST_DIR/test_outputs.py -rA
