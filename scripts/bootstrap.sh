#!/usr/bin/env bash
# Create (or refresh) the project virtualenv at .venv with the pinned dependencies.
#
# Idempotent and quick when nothing changed: a stamp records the hash of the inputs.
# The Spark provider depends on `pyspark-client`, which installs its own (older) copy of
# pyspark's Python files into the same `pyspark/` folder and so breaks the full pyspark
# (Python 4.2 files against 4.3 jars). We reinstall pyspark last and verify that
# `pyspark.__version__` matches the jars it ships.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=.venv
stamp="$VENV/.fscommit-bootstrap"
want=$(cat constraints.txt setup.cfg pyproject.toml scripts/bootstrap.sh | sha256sum | cut -d' ' -f1)

if [ ! -x "$VENV/bin/python" ]; then
  echo "bootstrap: creating $VENV with $("$PYTHON" --version)" >&2
  "$PYTHON" -m venv "$VENV"
fi

if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "bootstrap: installing pinned dependencies into $VENV (a few minutes the first time)" >&2
  "$VENV/bin/python" -m pip install --quiet --upgrade "pip>=25"
  "$VENV/bin/python" -m pip install --quiet -c constraints.txt -e '.[test]'
  pyspark_pin=$(grep -E '^pyspark==' constraints.txt)
  "$VENV/bin/python" -m pip install --quiet --no-deps --force-reinstall "$pyspark_pin"
fi

# Always verify: a later manual `pip install` can bring pyspark-client's files back.
"$VENV/bin/python" - <<'PY'
import pathlib
import sys

import pyspark

jars = pathlib.Path(pyspark.__file__).parent / "jars"
core = sorted(jars.glob("spark-core_*.jar"))
if not core or not core[0].name.endswith(f"-{pyspark.__version__}.jar"):
    sys.exit(
        f"bootstrap: pyspark Python files are {pyspark.__version__} but the jars are "
        f"{[p.name for p in core]}: run `rm {sys.prefix}/.fscommit-bootstrap` and rerun"
    )
PY
echo "$want" > "$stamp"
