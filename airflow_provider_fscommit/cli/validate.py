"""check spec files as the DAG factory reads them, one line per problem

Read every spec file of the folders (their *.yaml, *.yml, *.json) and files given, as
`partition_commit_dags` will in Airflow and the operators will at run time: the table
options, the `dag:` section and the schedule derived from the partition time. Print one
line per problem, `FILE: option: message`; exit 0 when every file is good, 1 otherwise
(for a deployment's CI). Only the spec files are read, never a stream or a catalog.
"""

from __future__ import annotations

import argparse
import json

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
        "dags": {spec.dag.dag_id: spec.path for spec in folder.specs},
        "problems": [
            {"file": p.file, "option": p.option, "message": p.message} for p in folder.problems
        ],
    }


def render(folder: SpecFolder) -> str:
    """Each problem on its line, then a count a CI log shows last."""
    lines = [str(problem) for problem in folder.problems]
    broken = len(folder.problem_files())
    lines.append(
        f"{len(folder.specs)} spec file(s) good, {broken} with {len(folder.problems)} problem(s)"
    )
    return "\n".join(lines)
