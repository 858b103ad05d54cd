#!/usr/bin/env bash
# The README's main command (after scripts/bootstrap.sh): run the end-to-end demo.
set -euo pipefail
cd "$(dirname "$0")/.."
export SPARK_LOCAL_IP=${SPARK_LOCAL_IP:-127.0.0.1}
exec .venv/bin/python -m fscommit_dev.demo "$@"
