"""The application behind ``fscommit class-archive``: a real driver whose JVM writes the
host's class archive as it exits, published whole; a second call keeps it."""

from __future__ import annotations

from airflow_provider_fscommit.jobs.class_archive import DIR_ENV, located, write_archive
from airflow_provider_fscommit.jobs.launch import SparkInstallation

# The first bytes of a dynamic class-data-sharing archive (JDK 13 and later).
DYNAMIC_ARCHIVE_MAGIC = (0xF00BABA8).to_bytes(4, "little")


def test_its_driver_writes_a_whole_archive_and_a_second_call_keeps_it(tmp_path, monkeypatch):
    monkeypatch.setenv(DIR_ENV, str(tmp_path / "jvm"))
    spark = SparkInstallation.locate()
    path, written = write_archive(spark)
    assert written and path == located(spark)
    with path.open("rb") as header:
        assert header.read(4) == DYNAMIC_ARCHIVE_MAGIC
    # Published by a rename once the driver had exited: no unfinished file, no claim.
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    stamp = path.stat().st_mtime_ns
    assert write_archive(spark) == (path, False)
    assert path.stat().st_mtime_ns == stamp
