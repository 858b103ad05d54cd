"""``fscommit``: look at and operate a Spark streaming table's partition commit.

A thin shell over :mod:`airflow_provider_fscommit.core`: it builds a :class:`TableSpec`
from flags (Flink option keys accepted through ``--option``), calls the core and prints
a readable table or, with ``--json``, one JSON object. Each command is a module of this
package (its parser, its run, its rendering); this one builds the parser and dispatches.

Exit codes: one table for every command, :mod:`.exit_codes` (the help's epilog prints
it). A usage error prints the usage of the command it was made in.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

from airflow_provider_fscommit import __version__
from airflow_provider_fscommit.cli import (
    class_archive,
    clean_staging,
    commit,
    compact,
    expire,
    init,
    plan,
    quarantine,
    status,
    validate,
)
from airflow_provider_fscommit.cli.arguments import (
    COMMAND_GROUPS,
    add_json_flag,
    add_table_arguments,
    missing_table_flags,
)
from airflow_provider_fscommit.cli.exit_codes import EXIT_CODES, ExitCode
from airflow_provider_fscommit.cli.init import inferred_spec
from airflow_provider_fscommit.console import messages_to_stderr
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError

Command = Callable[[TableSpec, argparse.Namespace], int]

# The commands' modules, in the order help lists them: each is named after its command,
# says in its docstring what it does (the help), adds its own arguments to the table's,
# and runs.
_MODULES = (
    init,
    status,
    compact,
    commit,
    plan,
    clean_staging,
    expire,
    quarantine,
    validate,
    class_archive,
)

# Every table command reads what it is not told off the stream, one way (init's): init
# always, the others when the partition keys are not given (a table named in full is
# read exactly as named, as the DAGs read its spec). What was inferred rides on
# ``args.inference`` (None when nothing was) and is printed: in status's header, on
# stderr for the others.
_INFERRING = "init"


# Examples of the commands whose module has none of its own (EXAMPLES).
_EXAMPLES = {
    "validate": "  fscommit validate dags/specs                  # a deployment's CI\n"
    "  fscommit validate specs/events.yaml --json",
}


def command_name(module: ModuleType) -> str:
    """``clean-staging`` for the module ``clean_staging``."""
    return module.__name__.rsplit(".", 1)[-1].replace("_", "-")


def takes_table(module: ModuleType) -> bool:
    """Whether a command works on one table (the table flags) or reads files of its own."""
    return getattr(module, "TAKES_TABLE", True)


COMMANDS: dict[str, Command] = {
    command_name(module): module.run for module in _MODULES if takes_table(module)
}
#: The commands that take no table (spec files of their own, the host): the arguments alone.
FILE_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    command_name(module): module.run for module in _MODULES if not takes_table(module)
}


def build_parser() -> argparse.ArgumentParser:
    """The ``fscommit`` parser: one subcommand per operation, in the order help lists them."""
    parser = argparse.ArgumentParser(
        prog="fscommit",
        description="Flink-style partition commit for Spark Structured Streaming tables.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"fscommit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in _MODULES:
        # Its docstring's first line is the command's help, the next paragraph its
        # description (none under python -OO, which strips docstrings).
        summary, _, description = (module.__doc__ or "").strip().partition("\n\n")
        examples = getattr(module, "EXAMPLES", None) or _EXAMPLES.get(command_name(module))
        command = commands.add_parser(
            command_name(module),
            help=summary,
            description=description,
            epilog=(f"examples:\n{examples}\n\n" if examples else "") + EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if takes_table(module):
            # Only the table flags it reads (arguments.COMMAND_GROUPS): a table command
            # missing there is a KeyError here, at import, not a help listing everything.
            add_table_arguments(command, COMMAND_GROUPS[command_name(module)])
        module.add_arguments(command)
        add_json_flag(command)  # every command prints one JSON object on request
        command.set_defaults(inference=None)
    return parser


def subcommand_parser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of the subcommand ``name``, whose usage its usage errors print."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[name]
    raise KeyError(name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    command = subcommand_parser(parser, args.command)
    if unknown:
        command.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        missing = (
            missing_table_flags(args, ("--partition-keys",)) if args.command in COMMANDS else []
        )
    except FsCommitError as exc:
        command.error(str(exc))
    if missing:
        command.error(f"the following arguments are required: {', '.join(missing)} (or --spec)")
    try:
        with messages_to_stderr():
            return _run(args)
    except BrokenPipeError:
        # Output piped into `head` and cut: not an error. Silence the flush at exit too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
    try:
        if args.command in FILE_COMMANDS:
            return FILE_COMMANDS[args.command](args)
        if getattr(args, "specs", None):
            return status.run_overview(args)
        spec, args.inference = inferred_spec(args, whole=args.command == _INFERRING)
        if args.inference and args.command not in (_INFERRING, "status"):
            print(f"Inferred   {args.inference.summary}", file=sys.stderr)
        return COMMANDS[args.command](spec, args)
    except FsCommitError as exc:
        print(f"fscommit: error: {exc}", file=sys.stderr)
        return ExitCode.ERROR


if __name__ == "__main__":
    sys.exit(main())
