"""The core's log messages on stderr when fscommit runs as a program.

Under Airflow, task logs collect every logger. The ``fscommit`` CLI and the compaction
application (whose output the CLI and the operator keep) have no logging set up, and
Python would drop INFO messages such as "waiting for the table lock": a run blocked by
another one would then sit silently for up to the lock's wait.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

PACKAGE_LOGGER = "airflow_provider_fscommit"


@contextlib.contextmanager
def messages_to_stderr() -> Iterator[None]:
    """Show the package's INFO messages on (the current) stderr for the enclosed work."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("fscommit: %(message)s"))
    logger = logging.getLogger(PACKAGE_LOGGER)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
