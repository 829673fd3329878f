VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-fast lint install bench clean

$(PY):
	python3 -m venv $(VENV)

# The library alone needs no extra; the app needs the `app` extra (Streamlit) and the tests
# need both, so one install serves `make run` and `make test`.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[app,test]"
	# Compile the numba code of a default fit now, into the package's __pycache__ folders,
	# so that the first `snacks fit` or visit after installing does not spend seconds
	# compiling; snacks_core.core.compiled reads it there even when NUMBA_CACHE_DIR is set.
	env -u NUMBA_CACHE_DIR $(PY) -m snacks_core.cli.compile_ahead sample_data/a9a_small.svm
	touch $(STAMP)

install: $(STAMP)

# `streamlit run app.py`, with the solvers' warm-up started with the server (not at the
# first visit); whoever arrives while it runs sees "Warming up".  ARGS go to Streamlit,
# e.g. make run ARGS="--server.address 0.0.0.0" for a classroom's network.
run: $(STAMP)
	$(PY) -m snacks_core.app.launch $(ARGS)

# Lint first: ruff's rules (pyproject.toml, [tool.ruff]) are part of the test.
lint: $(STAMP)
	$(VENV)/bin/ruff check .

test: lint
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium) || echo "chromium could not be installed: the browser test will be skipped"
	$(PY) -m pytest

# The inner loop (about a minute): every test but those marked `slow` (app, browser, large
# files, anything over about 2 s).  `make test` still runs them all.
test-fast: lint
	$(PY) -m pytest -m "not slow"

bench: $(STAMP)
	$(PY) benchmarks/bench_core.py

clean:
	rm -rf $(VENV)
