"""``fscommit plan``: the plan of exactly the run ``compact`` would make, and nothing written."""

from __future__ import annotations

import json

from airflow_provider_fscommit.cli.main import main
from fscommit_dev.tables import status_args


def test_plan_shows_what_compact_would_do_per_partition_and_writes_nothing(
    compacted_stream, tmp_path, capsys
):
    table = tmp_path / "table"
    base = [*status_args(compacted_stream)[1:], "--table-path", str(table)]
    assert main(["plan", *base, "--json"]) == 0
    plans = json.loads(capsys.readouterr().out)["plans"]
    assert main(["plan", *base]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [p["partition"] for p in plans]
    for line, plan in zip(lines, plans, strict=True):
        files = sum(len(u["inputs"]) for u in plan["units"])
        assert f": {files} file(s), " in line
        assert line.endswith(f"-> {len(plan['units'])} output file(s)")
    assert main(["compact", *base, "--dry-run"]) == 0  # the same flags, the same plan
    assert capsys.readouterr().out.splitlines() == lines
    assert not table.exists()
