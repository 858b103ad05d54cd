# The two entry points of the README. Both create .venv with the pinned dependencies first.
.PHONY: demo test test-fast lint venv

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
