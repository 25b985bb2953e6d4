# Attention Lab's two commands (README): `make run` opens the lab, `make test` passes every test.
# Both make the clone's own .venv from the hashed lock first, and reuse it while requirements.lock is unchanged.
.PHONY: run test fast serve lint venv system-packages gpu-check

PYTHON ?= python3
PORT ?= 8501
VENV_PYTHON := .venv/bin/python

venv:
	@PYTHON=$(PYTHON) scripts/venv.sh

system-packages:
	@scripts/system_packages.sh

## The lab on the shipped models, offline, at http://localhost:$(PORT); it warms itself in the background (asgi.py)
run: venv
	@echo "Attention Lab: http://localhost:$(PORT)  (Ctrl+C stops it)"
	@$(VENV_PYTHON) -m streamlit run asgi.py --server.port $(PORT) --browser.gatherUsageStats false

## Every test, browser tests included, with the venv's Python (CI runs this: .ci/run). Two workers (pytest-xdist),
## one test file each at a time (--dist loadfile: a file's session server and browser stay in one worker): the suite's
## time is mostly waiting on Streamlit servers and Chromium, and two files at once fill both cores. TEST_WORKERS=0: one.
## Files are handed out in collection order (--no-loadscope-reorder), which tests/conftest.py starts with the longest
## (LONGEST_FILES), so that no long file starts near the end while the other worker runs out of work.
## It ends with where the time went (tests/suite_times.py: the slowest files, each tier, each worker's idle tail) and
## leaves each test's time in test-results/ (junit XML, and every test phase with its worker as JSON).
## Every process of a run (the two workers, each Streamlit server and replica, the fresh interpreters some tests start)
## imports the same modules: Python keeps their compiled form in __pycache__ (git ignores it) for the next process and
## the next run, even where the environment says not to write it (PYTHONDONTWRITEBYTECODE, set on some CI images and
## this project's machines), which had each process compile them again and each worker rewrite every test module.
TEST_WORKERS ?= 2
TEST_RESULTS := test-results
KEEP_BYTECODE := PYTHONDONTWRITEBYTECODE=
test: venv system-packages lint
	$(KEEP_BYTECODE) $(VENV_PYTHON) -m pytest -q -rfER -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15 \
		--junitxml=$(TEST_RESULTS)/junit.xml --suite-times=$(TEST_RESULTS)/suite-times.json $(PYTEST_ARGS)

## The fast local loop (no browser, nothing slow), on the same workers as make test (TEST_WORKERS=0: one process)
fast: venv
	$(KEEP_BYTECODE) $(VENV_PYTHON) -m pytest -q -m "not browser and not slow" -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

lint: venv
	$(VENV_PYTHON) -m ruff check .

## A class: several replicas behind HAProxy (python serve.py --help)
serve: venv system-packages
	$(VENV_PYTHON) serve.py $(SERVE_ARGS)

## On a CUDA GPU: train the shipped recipe 400 steps and run SmolLM2 and a patching sweep there, against the CPU's
## results, with timings (scripts/gpu_check.py); without CUDA it says so and exits 0
gpu-check: venv
	$(VENV_PYTHON) scripts/gpu_check.py
