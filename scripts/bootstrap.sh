#!/usr/bin/env bash
# Create (or refresh) the project virtualenv at .venv with the pinned dependencies.
#
# Idempotent and quick when nothing changed: a stamp records the hash of the inputs.
# The installation itself is scripts/install.sh (shared with the Dockerfile).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=.venv
stamp="$VENV/.fscommit-bootstrap"
want=$(cat constraints.txt setup.cfg pyproject.toml scripts/bootstrap.sh scripts/install.sh \
  | sha256sum | cut -d' ' -f1)

if [ ! -x "$VENV/bin/python" ]; then
  echo "bootstrap: creating $VENV with $("$PYTHON" --version)" >&2
  "$PYTHON" -m venv "$VENV"
fi

if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "bootstrap: installing pinned dependencies into $VENV (a few minutes the first time)" >&2
  "$VENV/bin/python" -m pip install --quiet --upgrade "pip>=25"
  scripts/install.sh "$VENV/bin/python" -e '.[test]'
fi

# Always verify: a later manual `pip install` can bring pyspark-client's files back.
if ! "$VENV/bin/python" scripts/check_pyspark.py; then
  echo "bootstrap: run \`rm $stamp\` and rerun" >&2
  exit 1
fi
echo "$want" > "$stamp"
