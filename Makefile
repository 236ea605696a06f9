# Two commands for a fresh machine: `make demo` (the main job) and `make test` (the test suite).
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast install clean freeze bench

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,docker,train]'
	touch $(STAMP)

install: $(STAMP)

# The main job on the embedded defaults: bwrap sandbox, built-in core suite, oracle and noop baselines.
demo: $(STAMP)
	mkdir -p out
	-$(PY) -m pytest task_suites/core -p no:cacheprovider -q -n 2 --termrl-agent=oracle \
	  --termrl-run-dir=out/oracle --termrl-report=out/oracle.json --junitxml=out/oracle.xml
	-$(PY) -m pytest task_suites/core -p no:cacheprovider -q -n 2 --termrl-agent=noop --tb=no \
	  --termrl-run-dir=out/noop --termrl-report=out/noop.json --junitxml=out/noop.xml
	$(PY) -m pytest_termrl.report out/oracle.json out/noop.json

# The project's own tests, slow tiers included (this is what CI runs).
test: $(STAMP)
	$(PY) -m pytest tests -p no:cacheprovider -q -n 2

test-fast: $(STAMP)
	$(PY) -m pytest tests -p no:cacheprovider -q -n 2 -m "not slow"

freeze: $(STAMP)
	$(PY) -m pytest task_suites/core -p no:cacheprovider -q -n 2 --termrl-freeze

bench: $(STAMP)
	$(PY) benchmarks/bench_episode.py
	$(PY) benchmarks/bench_manifest.py
	$(PY) benchmarks/bench_docker.py
	$(PY) benchmarks/bench_training.py

clean:
	rm -rf $(VENV) out .termrl
