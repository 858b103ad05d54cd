# The entry points of the README. Each creates .venv with the pinned dependencies first.
.PHONY: bench demo test test-fast lint venv

# Parallel test workers (pytest-xdist): most tests wait on JVM and Airflow start-up, so
# more workers than the 2 cores of the machines we measure on pay off (DEVELOPERS.md).
WORKERS ?= 3
PYTEST = .venv/bin/python -m pytest -n $(WORKERS)

venv:
	@scripts/bootstrap.sh

demo: venv
	@scripts/demo.sh

test: venv
	.venv/bin/ruff check .
	$(PYTEST)

test-fast: venv
	$(PYTEST) -m "not slow"

lint: venv
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

# The benchmarks (bench/README.md): BENCH_ARGS="--scale 0.05 --reps 2" for a smoke run.
bench: venv
	scripts/install.sh .venv/bin/python -e '.[test,spark,bench]'
	.venv/bin/python -m bench $(BENCH_ARGS)
