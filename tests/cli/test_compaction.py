"""The compaction of ``compact``, ``plan`` and ``commit``: when it does nothing."""

from __future__ import annotations

import json

from airflow_provider_fscommit.cli.main import main
from fscommit_dev.tables import status_args


def test_nothing_committable_yet_exits_3_and_plan_changes_nothing(
    compacted_stream, tmp_path, capsys
):
    table = tmp_path / "table"
    base = [*status_args(compacted_stream)[1:], "--table-path", str(table)]
    later = [*base, "--delay", "100 d"]  # the last --delay wins: nothing is that old
    assert main(["plan", *base, "--json"]) == 0
    plans = json.loads(capsys.readouterr().out)["plans"]
    assert plans and all(p["units"] for p in plans)
    assert main(["plan", *later]) == 3
    assert not table.exists()  # a plan writes nothing
    for command in (["compact"], ["commit", "--policy", "success-file"]):
        # Nothing to compute: no Spark application (a spark-submit that fails never runs).
        assert main([*command, *later, "--spark-submit", "/bin/false"]) == 3
        assert "nothing committable yet" in capsys.readouterr().err
