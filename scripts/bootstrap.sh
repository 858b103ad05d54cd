#!/usr/bin/env bash
# Create (or refresh) the project virtualenv at .venv with the pinned dependencies.
#
# Idempotent and quick when nothing changed: a stamp records the hash of the inputs.
# The installation itself is scripts/install.sh (shared with the Dockerfile).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}

# Debian packages the tests drive for real, installed here when missing (as root);
# otherwise say how, and the tests that need them skip (or fail when CI is set):
# - chromium and its chromedriver: the browser tests (status page, Trigger Dag form);
# - postgresql: Airflow's metadata database under the real scheduler and api-server
#   (tests/support/postgres.py starts its own server; no system service is used).
need_packages() {
  command -v chromium >/dev/null && command -v chromedriver >/dev/null || echo chromium chromium-driver
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || echo postgresql
}
missing=$(need_packages | xargs)
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bootstrap: installing $missing with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    # A fresh machine has no package lists yet: fetch them only when apt has no candidate.
    # shellcheck disable=SC2086  # one word per package
    wanted=$(echo $missing | wc -w)
    # shellcheck disable=SC2086
    candidates=$(apt-cache policy $missing 2>/dev/null | grep -c 'Candidate: [^(]' || true)
    if [ "$candidates" != "$wanted" ]; then
      apt-get update -qq || true  # the install below says what is wrong
    fi
    # Debian's postgresql creates a `main` cluster; the tests never start it.
    # shellcheck disable=SC2086
    if ! apt-get install -y -qq --no-install-recommends $missing >/dev/null; then
      echo "bootstrap: apt-get could not install $missing; the tests that need them" \
        "will skip (fail under CI)" >&2
      [ -z "${CI:-}" ] || exit 1
    fi
  else
    echo "bootstrap: $missing missing; the tests that need them will skip." \
      "Install them: sudo apt-get install -y $missing" >&2
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
  scripts/install.sh "$VENV/bin/python" -e '.[test,spark]'
fi

# Always verify: a later manual `pip install` can bring pyspark-client's files back.
if ! "$VENV/bin/python" scripts/check_pyspark.py; then
  echo "bootstrap: run \`rm $stamp\` and rerun" >&2
  exit 1
fi
echo "$want" > "$stamp"
