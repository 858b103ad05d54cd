#!/usr/bin/env bash
# Create (or refresh) the project virtualenv at .venv with the pinned dependencies.
#
# Idempotent and quick when nothing changed: a stamp records the hash of the inputs.
# The installation itself is scripts/install.sh (shared with the Dockerfile).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}

# The commit-status page is tested in Debian's headless chromium, driven through its
# chromedriver (tests/plugins/test_status_page.py). Installed here when missing, as root;
# otherwise say how, and that test skips (or fails when CI is set).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bootstrap: installing chromium and chromium-driver with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    # A fresh machine has no package lists yet: fetch them only when apt has no candidate.
    candidates=$(apt-cache policy chromium chromium-driver 2>/dev/null | grep -c 'Candidate: [^(]' || true)
    if [ "$candidates" != 2 ]; then
      apt-get update -qq || true  # the install below says what is wrong
    fi
    if ! apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; then
      echo "bootstrap: apt-get could not install chromium chromium-driver; the browser" \
        "test will skip (fail under CI)" >&2
      [ -z "${CI:-}" ] || exit 1
    fi
  else
    echo "bootstrap: chromium or chromedriver is missing; the browser test of the status" \
      "page will skip. Install them: sudo apt-get install -y chromium chromium-driver" >&2
  fi
fi

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
