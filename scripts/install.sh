#!/usr/bin/env bash
# Install this provider with its pinned dependencies into the environment of a Python:
#   scripts/install.sh PYTHON PIP_INSTALL_ARGS...
# Used by scripts/bootstrap.sh (the .venv of `make test` and `make demo`) and by the
# Dockerfile, so the image gets exactly what the tests ran against.
#
# The Spark provider depends on `pyspark-client`, which installs its own (older) copy of
# pyspark's Python files into the same `pyspark/` folder and so breaks the full pyspark
# (Python 4.2 files against 4.3 jars). We reinstall pyspark last and verify that
# `pyspark.__version__` matches the jars it ships.
set -euo pipefail
cd "$(dirname "$0")/.."

python=$1
shift
"$python" -m pip install --quiet -c constraints.txt "$@"
pyspark_pin=$(grep -E '^pyspark==' constraints.txt)
"$python" -m pip install --quiet --no-deps --force-reinstall "$pyspark_pin"
"$python" scripts/check_pyspark.py
