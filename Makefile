# Every target sets itself up: a .venv with the package and its dev extras.
# The stamp makes set-up a no-op when pyproject.toml has not changed.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint typecheck unit bench fuzz fuzz-images fuzz-protocol fuzz-acp clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	# An editable install compiles nothing, and with PYTHONDONTWRITEBYTECODE set
	# every command would compile its modules from source (as a wheel install never does).
	$(BIN)/python -m compileall -q src >/dev/null
	touch $(STAMP)

# The main job, offline: validate every bundled manifest, then freeze with a
# demo key, verify and launch the metrics-digest Flight Plan (scripts/demo.sh).
demo: $(STAMP)
	$(BIN)/flightdeck validate examples/
	FLIGHTDECK=$(BIN)/flightdeck bash scripts/demo.sh

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy --strict src/

unit: $(STAMP)
	$(BIN)/pytest

test: lint typecheck unit

# One run of every benchmark; rewrites docs/benchmarks.md from that run only.
bench: $(STAMP)
	$(BIN)/python bench/report.py

# 10,000 malformed protocol lines through a real agent process (not CI).
fuzz-protocol: $(STAMP)
	$(BIN)/python scripts/fuzz_protocol.py --lines 10000

# N malformed JSON-RPC frames through a real `agent --acp` process (not CI).
fuzz-acp: $(STAMP)
	$(BIN)/python scripts/fuzz_acp.py --frames 2000

# Not part of CI (a 200-layer slice is in the tests): FUZZ_IMAGES_N malicious layers
# through the image unpacker, as root inside bubblewrap (bench/fuzz/images.py).
FUZZ_IMAGES_N ?= 10000
fuzz-images: $(STAMP)
	$(BIN)/python bench/fuzz/images.py -n $(FUZZ_IMAGES_N)

# Not part of CI: fuzz the document layer (FUZZ_N documents; bench/fuzz/documents.py)
# and the image unpacker.
FUZZ_N ?= 1000000
fuzz: $(STAMP) fuzz-images
	$(BIN)/python bench/fuzz/documents.py -n $(FUZZ_N)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
