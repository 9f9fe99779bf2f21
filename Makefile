# The two quick-start commands: `make run` (main job) and `make test` (the test suite).
VENV ?= .venv
PY := $(VENV)/bin/python
GNUGO := /usr/games/gnugo

.PHONY: run test gnugo bench warm-up clean

# `make run` needs only the engine (pip install obook); the grid, the service and the test extras
# (Playwright, schemathesis, scipy, ...) come with `make test`.
$(VENV)/.installed-base: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed: $(VENV)/.installed-base
	$(PY) -m pip install -q -e '.[all,test]'
	touch $@

# GNU Go 3.8 is the rules oracle of the tests; install it from Debian when we can.
gnugo:
	@if [ ! -x $(GNUGO) ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get install -y -qq gnugo >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq gnugo)) >/dev/null; \
	  else echo "GNU Go not installed: its comparison tests will be skipped (apt-get install gnugo)"; fi; \
	fi

run: $(VENV)/.installed-base
	$(VENV)/bin/obook build --book demo --for 300 --target 40 --workers 2

# The dashboard's browser test needs /usr/bin/chromium (apt-get install chromium; .ci/run installs it):
# without it the test is skipped, or fails under OBOOK_REQUIRE_SERVICES=1.
# Two workers for the tests that can share the machine, then alone those that stop or share its
# services and size their leases for a quiet machine (the marker is set in tests/conftest.py).
test: $(VENV)/.installed gnugo
	$(PY) -m pytest -q -n 2 -m "not machine_services"; shared=$$?; \
	  $(PY) -m pytest -q -m machine_services; alone=$$?; \
	  test $$shared = 0 && test $$alone = 0

bench: $(VENV)/.installed
	$(PY) benchmarks/engine.py

# Compile the engine into the numba cache ahead of its first use, with a progress line.
warm-up: $(VENV)/.installed-base
	$(VENV)/bin/obook warm-up

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
