# Two commands do all set-up on a fresh machine with only Python: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.evalkit-installed

SAMPLE_CONTRACTS := subject.yaml traces.jsonl human-labels.jsonl criterion-verdicts.jsonl eval-matrix.yaml \
                    dataset.json expected-flow.json behavior-tree.json

SKILLEVAL     := data/skilleval
SKILLEVAL_OUT := reports/sample/skilleval
SKILLEVAL_PRODUCT := $(SKILLEVAL_OUT)/product
GIT           := $(shell command -v git)
# A fixed identity and date, so the sample product's HEAD (the report's tested_head) is the same everywhere
SAMPLE_GIT    := GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=sample GIT_AUTHOR_EMAIL=sample@example.invalid \
                 GIT_COMMITTER_NAME=sample GIT_COMMITTER_EMAIL=sample@example.invalid \
                 GIT_AUTHOR_DATE=2026-11-30T09:00:00Z GIT_COMMITTER_DATE=2026-11-30T09:00:00Z git

.PHONY: install demo demo-local-judge local-judge test test-all lint bench sample clean

$(STAMP): pyproject.toml examples/plugins/pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	# The example trace-format plug-in: OpenHands event streams and SWE-agent trajectories import as they are
	$(BIN)/python -m pip install --quiet --no-deps -e examples/plugins
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/evalkit validate --quiet examples/contracts/* $(addprefix data/sample/,$(SAMPLE_CONTRACTS))
	$(BIN)/evalkit traces stats data/sample/traces.jsonl
	$(BIN)/evalkit eval run data/sample/subject.yaml --out reports/sample-eval --repeats 2 --concurrency 4
	rm -rf reports/sample-judge
	$(BIN)/evalkit judge run --spec data/sample/judge-specs.yaml --traces data/sample/traces.jsonl \
	    --labels data/sample/human-labels.jsonl --provider replay --cassette data/sample/judge-cassette.jsonl \
	    --out reports/sample-judge/criterion-verdicts.jsonl --no-progress
	# The sample's verdicts and run records are what the judge runner writes from the cassette:
	cmp reports/sample-judge/criterion-verdicts.jsonl data/sample/criterion-verdicts.jsonl
	cmp reports/sample-judge/criterion-verdicts.runs.jsonl data/sample/criterion-verdicts.runs.jsonl
	$(BIN)/evalkit run data/sample/subject.yaml --out reports/sample
	# Both runs above were recorded in reports/history: the trend each report draws, and the CI check
	$(BIN)/evalkit history show reports/history
	# A skill release of the sample tool: lint, validate, run both arms, the worksheet, resume with recorded answers
	$(BIN)/evalkit skill-eval lint $(SKILLEVAL)/skills/candidate --policy $(SKILLEVAL)/registry/policy.json
	$(BIN)/evalkit skill-eval lint $(SKILLEVAL)/skills/baseline --policy $(SKILLEVAL)/registry/policy.json
	$(BIN)/evalkit skill-eval validate $(SKILLEVAL)/registry
	$(BIN)/evalkit skill-eval validate $(SKILLEVAL)/registry --skills $(SKILLEVAL)/skills/candidate
	rm -rf $(SKILLEVAL_OUT)
	# The product under test: a clean checkout of the tool on a branch; the candidate binary comes from it
	mkdir -p $(SKILLEVAL_PRODUCT) && cp -R $(SKILLEVAL)/tool $(SKILLEVAL_PRODUCT)/
	cd $(SKILLEVAL_PRODUCT) && $(SAMPLE_GIT) init -q -b main && $(SAMPLE_GIT) add -A && $(SAMPLE_GIT) commit -q -m "tasknote 0.2.0"
	$(BIN)/evalkit skill-eval run $(SKILLEVAL)/registry --candidate $(SKILLEVAL)/skills/candidate \
	    --baseline $(SKILLEVAL)/skills/baseline --adapter script --bin tasknote=$(SKILLEVAL_PRODUCT)/tool/tasknote \
	    --bin git=$(GIT) --same-baseline-bin --product $(SKILLEVAL_PRODUCT) \
	    --tested-head $$(git -C $(SKILLEVAL_PRODUCT) rev-parse HEAD) \
	    --session-id sample-release-0-2 --generated-at 2026-11-30T09:00:00Z --candidate-version 0.2.0 \
	    --baseline-version 0.1.0 --out $(SKILLEVAL_OUT)/stage
	$(BIN)/evalkit skill-eval worksheet $(SKILLEVAL_OUT)/stage --out $(SKILLEVAL_OUT)/worksheet.html
	$(BIN)/evalkit skill-eval resume $(SKILLEVAL_OUT)/stage --answers $(SKILLEVAL)/answers.json \
	    --out $(SKILLEVAL_OUT)/report.json
	$(BIN)/evalkit skill-eval report-page $(SKILLEVAL_OUT)/report.json --out $(SKILLEVAL_OUT)/report.html
	# The run's report, now with the skill-eval section
	$(BIN)/evalkit report reports/sample

# The sample's judges run by a real model on this machine (llama.cpp server, SmolLM2-135M), then calibrated.
# A 135M model is a poor judge; this shows the loop run for real. The first LIMIT traces that have human
# labels (so calibrate has pairs), about a minute a call on 2 cores. It fails when the judge run or a
# calibration fails (a server crash included: its log is kept in $(LOCAL_OUT)/llama-server.log); a reply
# the 135M model leaves invalid after the correction is an error row it reports, not a failure of the run.
LIMIT ?= 4
LOCAL_OUT := reports/sample-local-judge
# llama.cpp compiles for the machine it is built on by default (GGML_NATIVE): a build made where AMX or
# AVX-512 exist crashes where they do not (or where the kernel does not enable AMX). Built instead for a
# portable x86-64 baseline: AVX2, FMA, F16C and BMI2 (Haswell, 2013, and every Zen), no AVX-512, no AMX.
# CMAKE_ARGS reaches llama.cpp's CMake through pip (PyPI has its source only); about 20 minutes on 2 cores,
# once: pip keeps the wheel it built and reuses it. A wheel built before without these flags would be reused
# too: `python -m evalkit.judge.local_server` refuses an AMX build where the kernel has no AMX, and prints
# the command that rebuilds it.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
                    -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
LOCAL_STAMP := $(VENV)/.evalkit-local-judge
$(LOCAL_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet -e ".[local-judge]"
	@touch $(LOCAL_STAMP)

local-judge: $(LOCAL_STAMP)

demo-local-judge: $(LOCAL_STAMP)
	@mkdir -p $(LOCAL_OUT)
	$(BIN)/python -m evalkit.judge.local_server --log $(LOCAL_OUT)/llama-server.log -- \
	    $(BIN)/evalkit judge run --spec data/sample/judge-specs.yaml --traces data/sample/traces.jsonl \
	    --labels data/sample/human-labels.jsonl --labelled-only --limit $(LIMIT) \
	    --out $(LOCAL_OUT)/criterion-verdicts.jsonl --provider openai --model smollm2-135m \
	    --base-url '{base_url}' --concurrency 1 --timeout 1800 --allow-invalid-replies
	set -e; for c in grounded-policy escalation-correct; do \
	    $(BIN)/evalkit calibrate --labels data/sample/human-labels.jsonl \
	        --verdicts $(LOCAL_OUT)/criterion-verdicts.jsonl --criterion $$c; done

# ruff, and the import rule (the contracts under [tool.importlinter] in pyproject.toml; docs/architecture.md)
lint: $(STAMP)
	$(BIN)/ruff check evalkit tests benchmarks
	$(BIN)/lint-imports

# The everyday loop: every test but those marked slow (one smoke of each slow kind stays in); the ten
# slowest are listed at the end, so a test that grows slow is seen the day it does
test: lint
	$(BIN)/python -m pytest -m "not slow" --durations=10

# Everything, slow tests and the benchmarks' smoke included, on TEST_WORKERS processes: what CI runs
TEST_WORKERS ?= 2
test-all: lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=10

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) reports .pytest_cache .ruff_cache
