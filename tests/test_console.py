"""The package's INFO messages reach stderr while fscommit runs as a program, and only then."""

from __future__ import annotations

import logging

from airflow_provider_fscommit.console import PACKAGE_LOGGER, messages_to_stderr

LOCK_LOGGER = f"{PACKAGE_LOGGER}.core.ledger.lock"


def test_info_lines_of_the_package_show_on_stderr_inside_and_not_after(capsys):
    before = logging.getLogger(PACKAGE_LOGGER).level
    with messages_to_stderr():
        logging.getLogger(LOCK_LOGGER).info("waiting for the table lock")
        logging.getLogger(LOCK_LOGGER).debug("a detail")
        logging.getLogger("py4j").warning("another library's message")
    logging.getLogger(LOCK_LOGGER).info("after the run")
    err = capsys.readouterr().err
    assert "fscommit: waiting for the table lock\n" in err
    assert "a detail" not in err and "after the run" not in err
    assert "fscommit: another library" not in err
    assert logging.getLogger(PACKAGE_LOGGER).level == before
