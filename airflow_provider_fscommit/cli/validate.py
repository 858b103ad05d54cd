"""check spec files as the DAG factory reads them, and say what each table will run

Read every spec file of the folders (their *.yaml, *.yml, *.json) and files given, as
`partition_commit_dags` will in Airflow and the operators will at run time: the table
options, the `dag:` section and the schedule derived from the partition time. For each
good file, print what its table will run: each DAG with its schedule and tasks, and
whether the sweep (late data, unfinished commits), expiry and staging clean-up are on.
A warning (a chain that publishes to no catalog) does not fail the file.
Print one line per problem, `FILE: option: message`; exit 0 when every file is good, 1
otherwise (for a deployment's CI). Only the spec files are read, never a stream or a
catalog.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from airflow_provider_fscommit.core.config.spec_file import SpecFolder, read_spec_folder

#: This command reads spec files of its own, not the one table of the other commands.
TAKES_TABLE = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "sources",
        nargs="+",
        metavar="FOLDER_OR_FILE",
        help="a folder of spec files, or spec files (e.g. dags/specs)",
    )


def run(args: argparse.Namespace) -> int:
    folder = read_spec_folder(args.sources)
    print(json.dumps(to_dict(folder), indent=2) if args.json else render(folder))
    return 1 if folder.problems else 0


def to_dict(folder: SpecFolder) -> dict[str, object]:
    return {
        "ok": not folder.problems,
        "dags": {dag_id: spec.path for spec in folder.specs for dag_id in spec.dag_ids},
        "tables": [spec.plan() for spec in folder.specs],
        "problems": [
            {"file": p.file, "option": p.option, "message": p.message} for p in folder.problems
        ],
    }


def render(folder: SpecFolder) -> str:
    """What each good spec runs, each problem on its line, then a count a CI log shows last."""
    lines = [line for spec in folder.specs for line in _plan_lines(spec.plan())]
    lines += [str(problem) for problem in folder.problems]
    broken = len(folder.problem_files())
    lines.append(
        f"{len(folder.specs)} spec file(s) good, {broken} with {len(folder.problems)} problem(s)"
    )
    return "\n".join(lines)


def _plan_lines(plan: dict[str, Any]) -> list[str]:
    """``FILE: table PATH``, a line per DAG (schedule: tasks), then the maintenance switches."""
    lines = [f"{plan['file']}: table {plan['table_path']} ({', '.join(plan['policies'])})"]
    lines += [f"  warning: {warning}" for warning in plan["warnings"]]
    for dag_id, dag in plan["dags"].items():
        catchup = ", catch-up" if dag["catchup"] else ""
        lines.append(f"  {dag_id}: {dag['schedule']}{catchup}: {' -> '.join(dag['tasks'])}")
    lines.append(
        "  "
        + "; ".join(
            (
                f"sweep every {plan['sweep']}" if plan["sweep"] else "sweep off",
                f"expire {plan['expire']}"
                if plan["expire"]
                else "expire off (no partition.expiration-time)",
                f"clean {plan['clean_staging']}"
                if plan["clean_staging"]
                else "clean off (no dag.clean-staging)",
            )
        )
    )
    return lines
