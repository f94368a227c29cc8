PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast bench clean

$(STAMP): setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,data,plot]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m kseq.demo

PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile --durations=25

# Everything (what CI runs): the library's doctests and the whole suite.
test: $(STAMP)
	$(PYTEST) --doctest-modules kseq tests

# The developer loop: everything not marked slow.
test-fast: $(STAMP)
	$(PYTEST) -m "not slow" --doctest-modules kseq tests

clean:
	rm -rf $(VENV) build *.egg-info
