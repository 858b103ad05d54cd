"""Debian packages the tests drive for real (``scripts/bootstrap.sh`` installs them)."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing(what: str, packages: str) -> NoReturn:
    """Skip a test whose Debian packages are missing, or fail it in CI (a broken install)."""
    reason = (
        f"{what} not installed: apt-get install -y {packages} "
        "(scripts/bootstrap.sh does it when run as root)"
    )
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)
