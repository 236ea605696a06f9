#!/bin/bash
# Build the agent's crate offline and run the hidden Rust tests one by one under pytest.
export CARGO_HOME=/tmp/cargo-home CARGO_NET_OFFLINE=true
cargo --version
pytest "$TEST_DIR/test_runlength.py" -rA
