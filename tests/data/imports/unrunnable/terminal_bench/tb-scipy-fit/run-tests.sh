#!/bin/bash
pip install pytest scipy==1.13.0
pytest $TEST_DIR/test_outputs.py -rA
