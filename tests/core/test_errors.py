"""The error classes: one base a caller can catch, and messages that stay readable."""

from __future__ import annotations

import inspect

import pytest

from airflow_provider_fscommit.core import errors
from airflow_provider_fscommit.core.errors import (
    FsCommitError,
    HeaderMismatchError,
    UnreadableLineFileError,
    shown,
)


def test_every_error_of_the_project_is_an_fscommit_error():
    """The CLI prints an FsCommitError as one line with exit status 1: none may escape it."""
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass)]
    defined = [c for c in classes if c.__module__ == errors.__name__]
    assert len(defined) > 20
    assert [c.__name__ for c in defined if not issubclass(c, FsCommitError)] == []
    assert not issubclass(FsCommitError, (ValueError, OSError))  # not mistaken for a bug


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("short", "'short'"),
        ("x" * 78, repr("x" * 78)),
        ("x" * 200, repr("x" * 200)[:79] + "… (202 characters)"),
    ],
    ids=["short", "at-the-limit", "huge"],
)
def test_shown_quotes_a_value_and_cuts_a_huge_one_saying_how_long_it_was(value, expected):
    assert shown(value) == expected


def test_line_file_errors_name_the_files_and_headers():
    unreadable = UnreadableLineFileError("file:///t/a.csv.gz", "gzip", "bad magic")
    assert unreadable.uri == "file:///t/a.csv.gz"
    assert str(unreadable) == "file:///t/a.csv.gz is not a readable gzip file: bad magic"
    mismatch = str(HeaderMismatchError("file:///a.csv", b"id,ts\n", "file:///b.csv", b"id,k\n"))
    assert mismatch.startswith("CSV header of file:///b.csv ('id,k\\n') differs from")
    assert "file:///a.csv ('id,ts\\n')" in mismatch and "cannot be merged" in mismatch
