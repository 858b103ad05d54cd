# The entry points of the README. Each creates .venv with the pinned dependencies first.
.PHONY: bench demo demo-iceberg docs docs-serve test test-fast lint venv

# Parallel test workers (pytest-xdist): many tests sleep while a trigger polls or a server
# starts, so 3 workers keep the 2 cores of the machines we measure on busy (DEVELOPERS.md).
WORKERS ?= 3
PYTEST = .venv/bin/python -m pytest -n $(WORKERS)

venv:
	@scripts/bootstrap.sh

demo: venv
	@scripts/demo.sh

# The same stream committed to an Apache Iceberg table (pyiceberg's SQL catalog on SQLite).
demo-iceberg: venv
	@scripts/demo.sh --catalog iceberg

# The suite's budgets on the 2-core machines CI runs on (DEVELOPERS.md): each run says how
# long it took against its own.
TEST_BUDGET_MIN ?= 35
FAST_BUDGET_MIN ?= 5
TIMED = scripts/timed.sh

test: venv
	.venv/bin/ruff check .
	@$(TIMED) "make test" $(TEST_BUDGET_MIN) $(PYTEST)

test-fast: venv
	@$(TIMED) "make test-fast" $(FAST_BUDGET_MIN) $(PYTEST) -m "not slow"

lint: venv
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

# The benchmarks (bench/README.md): BENCH_ARGS="--scale 0.05 --reps 2" for a smoke run.
bench: venv
	scripts/install.sh .venv/bin/python -e '.[test,spark,bench]'
	.venv/bin/python -m bench $(BENCH_ARGS)

# The documentation site (mkdocs.yml, docs/): the reference pages generated from the code
# (docs/reference/), then the site built into site/, strict (a broken link fails it).
docs: venv
	.venv/bin/python -m fscommit_dev.docs_reference
	.venv/bin/mkdocs build --strict

# The site at http://127.0.0.1:8000, rebuilt as pages change.
docs-serve: docs
	.venv/bin/mkdocs serve
