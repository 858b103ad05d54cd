# The entry points of the README. Each creates .venv with the pinned dependencies first.
.PHONY: bench demo test test-fast lint venv

venv:
	@scripts/bootstrap.sh

demo: venv
	@scripts/demo.sh

test: venv
	.venv/bin/ruff check .
	.venv/bin/python -m pytest

test-fast: venv
	.venv/bin/python -m pytest -m "not slow"

lint: venv
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

# The benchmarks (bench/README.md): BENCH_ARGS="--scale 0.05 --reps 2" for a smoke run.
bench: venv
	scripts/install.sh .venv/bin/python -e '.[test,spark,bench]'
	.venv/bin/python -m bench $(BENCH_ARGS)
