"""``fscommit class-archive``: the host's class archive written now by a real driver,
kept once there, and a clear refusal where none can be."""

from __future__ import annotations

import json

import pytest

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.jobs.class_archive import DIR_ENV


def test_the_archive_is_written_by_a_real_driver_and_then_kept(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(DIR_ENV, str(tmp_path / "jvm"))
    assert main(["class-archive", "--json"]) == 0
    written = json.loads(capsys.readouterr().out)
    assert written["written"] is True
    archive = tmp_path / "jvm" / written["archive"].rpartition("/")[2]
    # What the driver's JVM wrote as it exited, published whole by a rename: a dynamic
    # class-data-sharing archive (its magic number), nothing else left in the folder.
    with archive.open("rb") as header:
        assert header.read(4) == (0xF00BABA8).to_bytes(4, "little")
    assert sorted(p.name for p in archive.parent.iterdir()) == [archive.name]
    stamp = archive.stat().st_mtime_ns
    assert main(["class-archive"]) == 0
    assert capsys.readouterr().out == f"Kept {archive}\n"
    assert archive.stat().st_mtime_ns == stamp


@pytest.mark.parametrize(
    ("setting", "flags", "named"),
    [
        ("off", [], f"{DIR_ENV} is 'off'"),
        (None, ["--spark-submit", "/bin/false"], "/bin/false has no Spark jars folder"),
    ],
)
def test_where_no_archive_can_be_written_the_command_says_why(
    setting, flags, named, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv(DIR_ENV, setting or str(tmp_path / "jvm"))
    assert main(["class-archive", *flags]) == 1
    assert named in capsys.readouterr().err
    assert not (tmp_path / "jvm").exists()
