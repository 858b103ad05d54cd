"""Each command's help offers the table flags it reads and no other (``COMMAND_GROUPS``),
with one or two examples and the exit codes; the flags it does not offer still name the
table, as for every command."""

from __future__ import annotations

import argparse
import re
from datetime import timedelta

import pytest

from airflow_provider_fscommit.cli.arguments import (
    COMMAND_GROUPS,
    DEPRECATED_FLAGS,
    END_OF_INPUT,
    TABLE,
    TABLE_FLAGS,
    TABLE_GROUPS,
    spec_from_args,
)
from airflow_provider_fscommit.cli.main import COMMANDS, build_parser, subcommand_parser

PARSER = build_parser()
SUBCOMMANDS = sorted(
    next(a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction)).choices
)
FLAGS = (*TABLE_FLAGS, END_OF_INPUT)


def help_of(command: str) -> str:
    return subcommand_parser(PARSER, command).format_help()


def offers(text: str, flag: str) -> bool:
    """Whether ``flag`` itself (not a longer flag it begins) is in the help."""
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text) is not None


def test_every_table_command_declares_the_groups_it_reads():
    assert set(COMMAND_GROUPS) == set(COMMANDS)
    for groups in COMMAND_GROUPS.values():
        assert set(groups) <= set(TABLE_GROUPS) and groups[0] == TABLE
    # Every group is read by some command, and every flag is in a group.
    assert {g for groups in COMMAND_GROUPS.values() for g in groups} == set(TABLE_GROUPS)
    assert {group for _, _, group in FLAGS} == set(TABLE_GROUPS)


@pytest.mark.parametrize("command", sorted(COMMAND_GROUPS))
def test_a_commands_help_offers_exactly_the_table_flags_it_reads(command):
    text = help_of(command)
    reads = COMMAND_GROUPS[command]
    for flag, _, group in FLAGS:
        assert offers(text, flag) == (group in reads), (command, flag, group)
    for old in DEPRECATED_FLAGS:
        assert not offers(text, old), (command, old)  # old names are never offered
    assert offers(text, "--spec") and offers(text, "--option")


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_commands_help_has_one_or_two_examples_and_the_exit_codes(command):
    text = help_of(command)
    examples = text.split("\nexamples:\n", 1)[1].split("\n\n", 1)[0]
    runs = [line for line in examples.splitlines() if line.startswith("  fscommit ")]
    assert 1 <= len(runs) <= 2, examples
    assert all(line.startswith(f"  fscommit {command} ") for line in runs), examples
    assert "Exit codes (the same for every command):" in text


def test_defaults_are_shown_in_the_users_units_and_policy_lists_every_kind():
    from airflow_provider_fscommit.core.config import options as o

    text = help_of("commit")
    assert "default: 128 MB." in text and "134217728" not in text
    assert "default: 5 s." in text  # --http-report-timeout
    flat = "".join(text.split())
    assert ",".join(map(str, o.PolicyKind)) in flat  # every kind, however wrapped


def test_a_flag_the_command_does_not_offer_still_names_the_table(capsys):
    """One table's flags serve every command: a flag of a group the command does not read
    is accepted, hidden, and sets the spec as for any command (a spec is checked whole: a
    metastore policy needs its table, whoever reads it)."""
    flags = [
        *("--staging-path", "/s", "--checkpoint-path", "/c", "--partition-keys", "dt"),
        *("--policy", "metastore", "--metastore-table", "events", "--delay", "1 h"),
        *("--http-report-url", "http://reports/fscommit", "--end-of-input"),
    ]
    for command, extra in (("clean-staging", ["--older-than", "1 d"]), ("status", [])):
        hidden = [f for f, _, group in FLAGS if group not in COMMAND_GROUPS[command]]
        assert any(flag in hidden for flag in flags), command
        spec = spec_from_args(PARSER.parse_args([command, *flags, *extra]))
        assert spec.metastore_table == "events" and spec.delay == timedelta(hours=1)
        assert spec.http_report_url == "http://reports/fscommit" and spec.end_of_input
    assert capsys.readouterr().err == ""  # nothing said: none of it is deprecated
