"""The driver JVM's class archive: written once where the cache lasts, then mapped by
every later run's driver, never at a run's expense."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_provider_fscommit.jobs.class_archive import (
    DIR_ENV,
    OPTS_ENV,
    ClassArchive,
    java_version,
)
from airflow_provider_fscommit.jobs.launch import SparkInstallation
from tests.support.compaction import SUBMIT, compact


@pytest.fixture
def archives(tmp_path, monkeypatch) -> Path:
    directory = tmp_path / "jvm"
    monkeypatch.setenv(DIR_ENV, str(directory))
    monkeypatch.delenv(OPTS_ENV, raising=False)
    return directory


def test_the_first_run_in_a_cache_only_marks_it_and_the_next_writes_the_archive(archives):
    """A cache that starts empty every time (a task pod) never pays for writing one."""
    spark = SparkInstallation.locate()
    first = ClassArchive.for_run(spark)
    assert first is not None and first.writing is None
    assert first.env({"AWS_REGION": "eu-west-1"}) == {"AWS_REGION": "eu-west-1"}
    second = ClassArchive.for_run(spark)
    assert second is not None and second.writing is not None
    assert second.env({}) == {
        OPTS_ENV: f"-XX:ArchiveClassesAtExit={second.writing} -Xlog:cds*=error"
    }
    # One writer at a time: a run beside it goes without an archive.
    beside = ClassArchive.for_run(spark)
    assert beside is not None and beside.writing is None and beside.env({}) == {}
    second.writing.write_bytes(b"what the driver wrote as it exited")
    second.finish(completed=True)
    assert sorted(p.name for p in archives.iterdir()) == sorted(
        [second.path.name, second.path.with_suffix(".seen").name]
    )
    later = ClassArchive.for_run(spark)
    assert later == ClassArchive(second.path)
    assert later.env({OPTS_ENV: "-Dx=1"}) == {OPTS_ENV: f"-Dx=1 -XX:SharedArchiveFile={later.path}"}


def test_a_run_that_did_not_complete_publishes_nothing_and_frees_the_writers_place(archives):
    spark = SparkInstallation.locate()
    ClassArchive.for_run(spark)
    killed = ClassArchive.for_run(spark)
    assert killed is not None and killed.writing is not None
    killed.writing.write_bytes(b"half an archive")
    killed.finish(completed=False)
    assert not killed.path.exists() and not killed.writing.exists()
    assert ClassArchive.for_run(spark).writing is not None  # the next run may write it


def test_no_archive_when_switched_off_or_where_java_has_no_dynamic_archives(
    archives, monkeypatch, tmp_path
):
    monkeypatch.setenv(DIR_ENV, "off")
    assert ClassArchive.for_run(SparkInstallation.locate()) is None
    release = tmp_path / "release"
    for text, version in (('JAVA_VERSION="1.8.0_392"', 8), ('JAVA_VERSION="17.0.15"', 17)):
        release.write_text(f'IMPLEMENTOR="Eclipse Adoptium"\n{text}\n')
        assert java_version(tmp_path) == version
    monkeypatch.setenv(DIR_ENV, str(archives))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))  # a Java 17 named by its release file...
    assert ClassArchive.for_run(SparkInstallation.locate()) is not None
    release.write_text('JAVA_VERSION="11.0.21"\n')  # ...and an 11, which cannot write one
    assert ClassArchive.for_run(SparkInstallation.locate()) is None


def test_a_cache_that_cannot_be_written_leaves_runs_without_an_archive(
    archives, monkeypatch, tmp_path
):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(DIR_ENV, str(tmp_path / "a-file" / "jvm"))
    assert ClassArchive.for_run(SparkInstallation.locate()) is None


def test_the_driver_of_a_later_run_maps_the_archive_a_run_wrote_with_the_users_options_kept(
    compacted_stream, archives, monkeypatch, tmp_path
):
    """Real spark-submits through ``fscommit compact``: the run after the mark writes the
    archive as its driver exits; the next one's driver loads Spark's classes from it, and
    the options already in ``SPARK_SUBMIT_OPTS`` still reach the JVM."""
    stream = compacted_stream
    ClassArchive.for_run(SparkInstallation.locate())  # an earlier run marked this cache
    writer = compact(stream.staging, stream.checkpoint, str(tmp_path / "one"), *SUBMIT)
    assert writer.returncode == 0, writer.stderr[-3000:]
    assert len(list(archives.glob("*.jsa"))) == 1
    assert not list(archives.glob("*.tmp")) and not list(archives.glob("*.writing"))
    loaded = tmp_path / "classes.log"
    monkeypatch.setenv(OPTS_ENV, f"-Xlog:class+load=info:file={loaded}")
    mapped = compact(stream.staging, stream.checkpoint, str(tmp_path / "two"), *SUBMIT)
    assert mapped.returncode == 0, mapped.stderr[-3000:]
    assert {p["state"] for p in json.loads(mapped.stdout)["partitions"]} == {"published"}
    context = [
        line
        for line in loaded.read_text().splitlines()
        if " org.apache.spark.SparkContext " in line
    ]
    assert context and "source: shared objects file (top)" in context[0], context
