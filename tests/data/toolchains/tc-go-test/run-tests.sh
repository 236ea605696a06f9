#!/bin/bash
# Vet the agent's Go package, then run the hidden Go tests one by one under pytest.
export GOCACHE=/tmp/go-cache GOPATH=/tmp/go GOPROXY=off GOTOOLCHAIN=local GOFLAGS=-mod=mod
cd /app
go vet . || echo "go vet found problems"
pytest "$TEST_DIR/test_wordfreq.py" -rA
