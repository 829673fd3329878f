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
	touch $(STAMP)

install: $(STAMP)

# The solvers are compiled (and kept on disk by numba) before the server starts, so that
# its first visitor does not wait for the compiler.
run: $(STAMP)
	@echo "Compiling the solvers once (numba keeps them on disk for the server)..."
	$(PY) -c "from snacks_core.analysis import warm_up; warm_up()"
	$(PY) -m streamlit run app.py

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
