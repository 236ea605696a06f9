# Two commands for a fresh machine: `make demo` (the main job) and `make test` (the test suite).
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast install harbor clean freeze suite bench results train-demo grpo-demo

# llama-cpp-python (the embedded demo model's server) compiles from source: CPU only, AVX2,
# no -march=native (its AMX kernels crash on some VMs, llama.cpp #20824), no multimodal library.
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
export CMAKE_BUILD_PARALLEL_LEVEL ?= $(shell nproc)
# The demo runs the 14 hand-written core tasks (the generated ones are for measuring at scale).
DEMO_TASKS := archive_manifest_targz or backup_listed_files or batch_rename_photos or checksum_verify or config_ini_update or cron_validate or csv_pivot_monthly or dedupe_contacts or git_commit_configs or grades_text_report or json_active_users or log_error_counts or log_latency_stats or perms_from_spec

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-cache-dir -e '.[test,docker,train,demo,report,inspect,miniswe]'
	$(PY) -m pytest_termrl.agents.embedded --check >/dev/null
	touch $(STAMP)

install: $(STAMP)

# Harbor needs Python 3.12: its own virtual environment (pyenv's CPython 3.12), for the Harbor integration's tests and benchmark.
HARBOR_STAMP := .venv-harbor/.installed
$(HARBOR_STAMP): pyproject.toml .ci/harbor-setup.sh
	bash .ci/harbor-setup.sh
	touch $(HARBOR_STAMP)

harbor: $(HARBOR_STAMP)

# The main job on the embedded defaults: bwrap sandbox, the bundled model (Gemma 3 270M on
# llama.cpp, CPU only) untrained and with the adapter that make train-demo trained and shipped
# in models/, beside the reference and noop baselines. Four arms on the same tasks: a sample of
# the core suite's test split drawn by seed (never by results), clean, and one fault family on a
# few of them; the model arms with the settings the adapter's lift was measured with. It ends
# with the table, the paired difference and the HTML report. Failed episodes are the
# measurement, not an error; a usage error or a broken run stops the demo.
ADAPTER := models/gemma-3-270m-termrl-sft.lora.gguf
# pytest's exit status 1 ("some tests failed") is a completed measurement, not an error.
MEASURED := || [ $$? -eq 1 ]
demo: $(STAMP)
	@mkdir -p out
	@echo "== four arms: reference (runs each task's solution), noop (does nothing), base (the bundled model), trained (with $(ADAPTER))"
	@$(PY) -m pytest_termrl.training demo --out out --stages eval,table --arms reference,noop,base,trained --eval-dir . \
	  --adapter $(ADAPTER) --eval-sample 10 --eval-families clean,perm_denied --eval-fault-tasks 3 --results out/demo_table.json
	@$(PY) -m pytest_termrl.report html out/reference out/noop out/base out/trained -o out/report.html

# The measured files behind the README's tables (results/README.md says which is which): the
# demo's four arms and its paired table, the HTML report's size and speed, the grader audit, the admission of the
# import fixtures; then the README's tables are rewritten from them.
AUDIT_TASKS := $(foreach t,$(subst or ,,$(DEMO_TASKS)),--task $(t))
results: demo
	$(PY) tools/results.py out/reference/episodes.jsonl out/noop/episodes.jsonl out/base/episodes.jsonl \
	  out/trained/episodes.jsonl --out results/demo.json
	cp out/demo_table.json results/demo_table.json
	$(PY) benchmarks/bench_report.py --core-run out/reference --json results/html_report.json
	$(PY) -m pytest_termrl.audit task_suites/core $(AUDIT_TASKS) --receipts out/audit_core.jsonl --summary-json results/audit_core.json
	$(PY) -m pytest_termrl.audit tests/data/imports/runnable --receipts out/audit_imports.jsonl --summary-json results/audit_imports.json
	$(PY) -m pytest_termrl.admission tests/data/imports/runnable tests/data/tb_graders tests/data/harbor_fields tests/data/toolchains --json results/admission.json $(MEASURED)
	$(PY) benchmarks/bench_episode.py --json results/bench_episode.json
	$(PY) benchmarks/bench_episode.py --stages --json results/bench_episode_stages.json
	$(PY) benchmarks/bench_manifest.py --json results/bench_manifest.json
	$(PY) benchmarks/bench_throughput.py --json results/bench_throughput.json
	$(PY) benchmarks/bench_docker.py --json results/bench_docker.json
	$(PY) benchmarks/bench_remote_home.py --json results/bench_remote_home.json
	$(PY) benchmarks/bench_training.py --json results/bench_training.json
	$(PY) tools/readme.py README.md

# The embedded model trained on the environment's own episodes, on the CPU, and measured against
# itself untrained on the core suite's test split (python -m pytest_termrl.training demo --help
# lists the settings); the table goes to results/train_demo.json and the README, the adapter
# and its provenance to models/ (what make demo's trained arm loads).
train-demo: $(STAMP)
	$(PY) -m pytest_termrl.training demo --out out/train_demo --results results/train_demo.json --ship models
	$(PY) tools/readme.py README.md

# A few GRPO steps (about 20 minutes) from the SFT adapter that train-demo left in out/train_demo.
grpo-demo: $(STAMP)
	$(PY) -m pytest_termrl.training grpo --gguf embedded --init-adapter out/train_demo/adapter --suite out/train_demo/train_suite \
	  --split train --out out/grpo_demo --max-steps 40 --max-minutes 20 --num-generations 4 --per-device-train-batch-size 4 \
	  --max-completion-length 768 --max-tool-calls 4 --output-cap 1000 --threads 2 --learning-rate 3e-5 --salt grpo-demo \
	  --results results/grpo_demo.json
	$(PY) tools/readme.py README.md

# The project's own tests, slow tiers included (this is what CI runs).
test: $(STAMP) $(HARBOR_STAMP)
	$(PY) -m pytest tests -p no:cacheprovider -q -n 2

test-fast: $(STAMP)
	$(PY) -m pytest tests -p no:cacheprovider -q -n 2 -m "not slow"

freeze: $(STAMP)
	$(PY) -m pytest task_suites/core -p no:cacheprovider -q -n 2 --termrl-freeze

# Regenerate the core suite's generated tasks from their fixed seed, then validate and freeze.
suite: $(STAMP)
	$(PY) -m pytest_termrl.suitegen --out task_suites/core --seed 0 --per-family 8
	$(PY) -m pytest task_suites/core -p no:cacheprovider -q -n 2 --termrl-freeze

bench: $(STAMP)
	$(PY) benchmarks/bench_episode.py
	$(PY) benchmarks/bench_episode.py --stages
	$(PY) benchmarks/bench_manifest.py
	$(PY) benchmarks/bench_throughput.py
	$(PY) benchmarks/bench_docker.py
	$(PY) benchmarks/bench_remote_home.py
	$(PY) benchmarks/bench_training.py

clean:
	rm -rf $(VENV) out .termrl
