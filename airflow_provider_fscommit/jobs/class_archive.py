"""The driver JVM's class archive: Spark's classes prepared once per host, not per run.

A spark-submit spends seconds of its start finding, reading and verifying the classes
Spark's driver loads: on the maintainers' 2-core machine a compaction of workload (a)
took 13.3 s whole without an archive and 10.0-10.4 s with one. Java's dynamic class-data
sharing (JDK 13 and later) keeps them: ``-XX:ArchiveClassesAtExit`` writes the classes a
JVM loaded into an archive as it exits, and ``-XX:SharedArchiveFile`` maps that archive
into later JVMs.

**When one is written.** Writing costs the run that writes it ~11 s more and 130-190 MB of
disk, which pays off only where later runs find it. So the first run in a cache leaves a
mark, and a run that finds the mark (the cache kept its files between runs: a host, or a
persistent volume) writes the archive; a task pod that starts empty every time never
pays. One run writes at a time; the archive is published by a rename once its run has
finished, so no run maps a half-written one.

**Which.** One per Java (its home and version) and Spark (its ``jars`` folder, as last
changed). The JVM checks the rest itself: a class path that differs (another
``spark.driver.extraClassPath``, a jar replaced; one warning line) or a heap above 32 GB
(silently) starts without the archive, never fails.

**Where.** ``$FSCOMMIT_CLASS_ARCHIVE_DIR``, else ``airflow-provider-fscommit/jvm`` in
``$XDG_CACHE_HOME`` (``~/.cache``); ``FSCOMMIT_CLASS_ARCHIVE_DIR=off`` uses none. The
options reach only a driver this host starts (client mode), through
``SPARK_SUBMIT_OPTS``: they add to the driver's Java options instead of replacing a
cluster's ``spark.driver.extraJavaOptions``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from airflow_provider_fscommit.core.errors import ConfigError, FsCommitError
from airflow_provider_fscommit.jobs.launch import PACKAGE_DIR, SparkInstallation, default_conf

DIR_ENV = "FSCOMMIT_CLASS_ARCHIVE_DIR"
OPTS_ENV = "SPARK_SUBMIT_OPTS"
OFF = "off"
MIN_JAVA = 13  # dynamic archives (JEP 350)
KEPT_ARCHIVES = 3  # the latest Spark and Java pairs of this host, others deleted
# A writer's claim older than this was left by a killed run: another may take it.
STALE_CLAIM_S = 600.0
# What ``fscommit class-archive`` runs: a driver that loads what a compaction's loads.
WARM_UP = str(PACKAGE_DIR / "jobs" / "warm_up.py")
_VERSION = re.compile(r'^JAVA_VERSION="(?:1\.)?(\d+)', re.MULTILINE)


def archive_dir() -> Path | None:
    """Where archives are kept (None: switched off)."""
    named = os.environ.get(DIR_ENV)
    if named:
        return None if named.strip().lower() == OFF else Path(named)
    cache = os.environ.get("XDG_CACHE_HOME")
    if not cache:
        try:
            cache = str(Path.home() / ".cache")
        except RuntimeError:  # no home to keep a cache in
            return None
    return Path(cache) / "airflow-provider-fscommit" / "jvm"


def java_home() -> Path | None:
    """The Java spark-submit starts: ``$JAVA_HOME``'s, else ``java`` on PATH (as
    ``bin/spark-class`` picks it)."""
    home = os.environ.get("JAVA_HOME")
    if home:
        return Path(home).resolve()
    java = shutil.which("java")
    return None if java is None else Path(java).resolve().parent.parent


def java_version(home: Path) -> int | None:
    """The feature version in the Java home's ``release`` file (None: not found)."""
    try:
        found = _VERSION.search((home / "release").read_text(errors="replace"))
    except OSError:
        return None
    return int(found.group(1)) if found else None


def spark_jars(spark_submit: str, home: str | None) -> Path | None:
    """The ``jars`` folder of the Spark whose spark-submit runs (None: none found, e.g. a
    wrapper script outside its Spark home)."""
    if home is None:
        binary = shutil.which(spark_submit)
        if binary is None:
            return None
        home = str(Path(binary).resolve().parent.parent)
    jars = Path(home).resolve() / "jars"
    return jars if jars.is_dir() else None


def located(spark: SparkInstallation) -> Path | str:
    """Where this host keeps the archive of ``spark`` and the Java spark-submit starts, or
    why it keeps none."""
    directory = archive_dir()
    if directory is None:
        return f"{DIR_ENV} is '{OFF}', or there is no home folder to keep a cache in"
    java = java_home()
    if java is None:
        return "no Java found: set JAVA_HOME, or put java on PATH"
    version = java_version(java)
    if version is None or version < MIN_JAVA:
        return f"the Java at {java} is not {MIN_JAVA} or later, which dynamic archives need"
    jars = spark_jars(spark.spark_submit, spark.home)
    if jars is None:
        return f"{spark.spark_submit} has no Spark jars folder beside it: name its Spark home"
    identity = f"{java}\0{version}\0{jars}\0{jars.stat().st_mtime_ns}"
    key = hashlib.sha256(identity.encode()).hexdigest()[:16]
    return directory / f"spark-driver-{key}.jsa"


@dataclass(frozen=True)
class ClassArchive:
    """The archive of one Java and Spark pair, and what one run does with it.

    ``writing``: the file this run's driver writes as it exits (None: it maps ``path`` if
    that exists, or runs as without an archive).
    """

    path: Path
    writing: Path | None = None

    @classmethod
    def for_run(cls, spark: SparkInstallation) -> ClassArchive | None:
        """What a run of this Spark does with its archive; None: no archive (switched off,
        a Java without dynamic archives, or no Spark ``jars`` folder to key it by)."""
        path = located(spark)
        if isinstance(path, str):
            return None
        if path.exists():
            return cls(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            mark = path.with_suffix(".seen")
            if not mark.exists():  # the first run here: whether the cache lasts is unknown
                mark.touch()
                return cls(path)
            return _writer(path) or cls(path)  # None: another run writes it
        except OSError:  # a cache this user cannot write: runs go without an archive
            return None

    def env(self, given: Mapping[str, str]) -> dict[str, str]:
        """``given`` (what spark-submit's environment is to get) with this run's archive
        option added to ``SPARK_SUBMIT_OPTS`` (``given``'s, else this process's)."""
        if self.writing is not None:
            # Its warnings name each class it leaves out (those of signed jars, say): lines
            # by the hundred in the run's log, about nothing the run or the archive lacks.
            option = f"-XX:ArchiveClassesAtExit={self.writing} -Xlog:cds*=error"
        elif self.path.exists():
            option = f"-XX:SharedArchiveFile={self.path}"
        else:
            return dict(given)
        current = given.get(OPTS_ENV, os.environ.get(OPTS_ENV, "")).strip()
        return {**given, OPTS_ENV: f"{current} {option}".strip()}

    def finish(self, completed: bool) -> None:
        """After the run: the archive its driver wrote published if the run ``completed``
        (its JVM exited normally), else dropped; the writer's claim released. A cache that
        fails here costs the next runs their archive, never this run."""
        if self.writing is None:
            return
        with contextlib.suppress(OSError):
            if completed and self.writing.exists():
                os.replace(self.writing, self.path)
                _keep_latest(self.path.parent)
        for leftover in (self.writing, _claim_of(self.path)):
            with contextlib.suppress(OSError):
                leftover.unlink()


def write_archive(spark: SparkInstallation) -> tuple[Path, bool]:
    """This host's archive for ``spark``: written now by a small application's driver
    (:data:`WARM_UP`, which loads what a compaction's driver loads) unless there is one.
    Returns its path and whether this call wrote it; raises naming why none can be written.

    For where the cache does not outlive a run (an image built once, a volume pods
    share): ``fscommit class-archive``.
    """
    path = located(spark)
    if isinstance(path, str):
        raise ConfigError(f"no class archive can be written: {path}")
    if path.exists():
        return path, False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        archive = _writer(path)
    except OSError as exc:
        raise ConfigError(
            f"the class archive folder {path.parent} cannot be written ({exc}): set "
            f"{DIR_ENV} to a folder this user can write"
        ) from None
    if archive is None:
        raise ConfigError(f"another run is writing {path} now: try again once it has finished")
    command = [spark.spark_submit, "--master", "local[1]", "--name", "fscommit-class-archive"]
    for key, value in default_conf({}).items():
        command += ["--conf", f"{key}={value}"]
    env = os.environ | spark.env() | archive.env({})
    completed = False
    try:
        result = subprocess.run(
            [*command, WARM_UP], env=env, capture_output=True, text=True, check=False
        )
        completed = result.returncode == 0
    except OSError as exc:
        raise ConfigError(f"cannot run {spark.spark_submit} ({exc}): name its Spark home") from None
    finally:
        archive.finish(completed)
    if not completed or not path.exists():
        raise FsCommitError(
            f"the application that writes the class archive {path} failed "
            f"(exit code {result.returncode}):\n{result.stderr[-3000:]}"
        )
    return path, True


def _writer(path: Path) -> ClassArchive | None:
    """``path`` to be written by this run, its place claimed; None: another run claimed it
    (a claim left by a run killed long ago is taken over)."""
    claim = _claim_of(path)
    with contextlib.suppress(FileNotFoundError):
        if time.time() - claim.stat().st_mtime > STALE_CLAIM_S:
            claim.unlink()
    try:
        claim.touch(exist_ok=False)
    except FileExistsError:
        return None
    return ClassArchive(path, path.with_name(f"{path.stem}.{uuid.uuid4().hex}.tmp"))


def _claim_of(path: Path) -> Path:
    """The file whose creation claims the writing of ``path``."""
    return path.with_suffix(".writing")


def _keep_latest(directory: Path) -> None:
    """Delete all but the :data:`KEPT_ARCHIVES` latest archives (with their marks), and
    the unfinished files of runs killed while they wrote."""
    archives = sorted(
        directory.glob("spark-driver-*.jsa"), key=lambda p: p.stat().st_mtime, reverse=True
    )
    doomed = [p for a in archives[KEPT_ARCHIVES:] for p in (a, a.with_suffix(".seen"))]
    doomed += [
        p
        for p in directory.glob("spark-driver-*.tmp")
        if time.time() - p.stat().st_mtime > STALE_CLAIM_S
    ]
    for path in doomed:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
