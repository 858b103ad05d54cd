"""The exit codes of every ``fscommit`` command: one table, one meaning per code.

A cron job or a monitoring check reads the code, not the text: 0 is fine, 1 and 2 are
the command's own failure, 3 and up are states of the table that mean the same whatever
the command (so ``status``, ``status --specs`` and ``commit`` alert alike). The help's
epilog and the README print :data:`EXIT_CODES`, so the table is written once.
"""

from __future__ import annotations

import enum
import textwrap


class ExitCode(enum.IntEnum):
    """One constant per code; its description is the table's row."""

    OK = 0
    ERROR = 1
    USAGE = 2
    NOTHING_COMMITTABLE = 3
    ATTENTION = 4
    NOT_STAGED = 5

    @property
    def meaning(self) -> str:
        return _MEANINGS[self]


_MEANINGS = {
    ExitCode.OK: "done, or nothing to do (status: nothing needs attention)",
    ExitCode.ERROR: "error: the command failed; the message names the thing and the fix",
    ExitCode.USAGE: "usage: a flag or argument is wrong; the command's usage is printed",
    ExitCode.NOTHING_COMMITTABLE: (
        "nothing committable yet: no partition is past its commit time (compact, commit, "
        "plan), or the partition named waits (status PARTITION); try again later"
    ),
    ExitCode.ATTENTION: (
        "attention needed: a stalled stream, a partition in error, orphan files, an "
        "unfinished policy (status, status --specs, status PARTITION)"
    ),
    ExitCode.NOT_STAGED: (
        "not staged: the stream never wrote the partition named, and its commit time has "
        "passed (a wrong name, e.g. hour=3 for hour=03, or an hour without rows)"
    ),
}

#: The table as the help's epilog and the README show it.
EXIT_CODES = "Exit codes (the same for every command):\n" + "\n".join(
    textwrap.fill(
        f"{code.value}  {code.meaning}", 86, initial_indent="  ", subsequent_indent="     "
    )
    for code in ExitCode
)
