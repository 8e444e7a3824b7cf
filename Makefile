# Two commands do all set-up on a fresh machine with only Python: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.evalkit-installed

SAMPLE_CONTRACTS := subject.yaml traces.jsonl human-labels.jsonl criterion-verdicts.jsonl eval-matrix.yaml \
                    dataset.json expected-flow.json behavior-tree.json

.PHONY: install demo test lint bench sample clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/evalkit validate --quiet examples/contracts/* $(addprefix data/sample/,$(SAMPLE_CONTRACTS))
	$(BIN)/evalkit traces stats data/sample/traces.jsonl
	$(BIN)/evalkit run data/sample/subject.yaml --out reports/sample

lint: $(STAMP)
	$(BIN)/ruff check evalkit tests benchmarks

test: lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) reports .pytest_cache .ruff_cache
