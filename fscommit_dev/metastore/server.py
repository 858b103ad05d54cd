"""Start and stop a real Hive metastore Thrift server from pyspark's own jars.

pyspark ships the Hive 2.3 metastore, DataNucleus and Derby, which is all a metastore
needs. ``LoopbackMetastore.java`` (compiled on first use with ``javac`` and kept in
``~/.cache/airflow-provider-fscommit/metastore-classes``) serves the stock handler on
127.0.0.1 only; an embedded Derby database and a warehouse directory live in the state
directory. The server is tracked by its PID file there.

    python -m fscommit_dev.metastore.server start --dir .metastore --port 9083
    python -m fscommit_dev.metastore.server stop --dir .metastore
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyspark

from airflow_provider_fscommit.core.errors import FsCommitError

SOURCE = Path(__file__).with_name("LoopbackMetastore.java")
JARS = Path(pyspark.__file__).resolve().parent / "jars"


@dataclass(frozen=True)
class MetastoreServer:
    """A running server: its Thrift URI and PID."""

    state_dir: Path
    port: int
    pid: int

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"


def _compile() -> Path:
    """The compiled server, once per source and pyspark: kept in the user's cache (every
    test worker, demo and benchmark of a machine shares it), compiled into a new folder
    and renamed into place, so a concurrent compile of the same input costs only time."""
    inputs = hashlib.sha256(SOURCE.read_bytes() + str(JARS).encode()).hexdigest()[:16]
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    classes = Path(base) / "airflow-provider-fscommit" / "metastore-classes" / inputs
    if not (classes / "LoopbackMetastore.class").exists():
        classes.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(dir=classes.parent, prefix=".compiling-"))
        subprocess.run(
            ["javac", "-cp", f"{JARS}/*", "-d", str(building), str(SOURCE)],
            check=True,
            capture_output=True,
        )
        try:
            building.rename(classes)
        except OSError:  # another process put the same classes there first
            shutil.rmtree(building, ignore_errors=True)
    return classes


def start(
    state_dir: Path, port: int = 0, timeout: float = 120.0, jvm_options: Sequence[str] = ()
) -> MetastoreServer:
    """Start a server (``port`` 0: a free one) and wait until it accepts connections.

    ``jvm_options``: more options of its JVM, e.g. a log4j2 configuration that writes
    Hive's audit log (every call, which the soak counts).
    """
    state_dir = state_dir.resolve()
    state_dir.mkdir(parents=True, exist_ok=True)
    port = port or _free_port()
    classes = _compile()
    properties = {
        "hive.async.log.enabled": "false",
        "javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={state_dir / 'metastore_db'};create=true"
        ),
        "datanucleus.schema.autoCreateAll": "true",
        # pyspark ships HikariCP, not BoneCP (Hive's default pool, which its lock calls need)
        "datanucleus.connectionPoolingType": "HikariCP",
        "hive.metastore.schema.verification": "false",
        "hive.metastore.warehouse.dir": str(state_dir / "warehouse"),
        "derby.stream.error.file": str(state_dir / "derby.log"),
    }
    command = ["java", "-Xmx1g", *jvm_options, "-cp", f"{classes}:{JARS}/*"]
    command += [f"-D{key}={value}" for key, value in properties.items()]
    command += ["LoopbackMetastore", str(port)]
    log = open(state_dir / "metastore.log", "ab")  # noqa: SIM115 - owned by the server
    process = subprocess.Popen(
        command, stdout=log, stderr=log, cwd=state_dir, start_new_session=True
    )
    (state_dir / "metastore.pid").write_text(f"{process.pid} {port}\n")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise FsCommitError(
                f"the metastore server exited with {process.returncode}; see "
                f"{state_dir / 'metastore.log'}"
            )
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return MetastoreServer(state_dir, port, process.pid)
        time.sleep(0.3)
    stop(state_dir)
    raise FsCommitError(f"the metastore did not listen on 127.0.0.1:{port} in {timeout:.0f} s")


def stop(state_dir: Path) -> None:
    """Stop the server whose PID file is in ``state_dir`` (nothing if none)."""
    pid_file = state_dir / "metastore.pid"
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text().split()[0])
    try:
        os.killpg(pid, signal.SIGTERM)
        for _ in range(100):
            os.killpg(pid, 0)
            time.sleep(0.1)
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    pid_file.unlink()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="a local Hive metastore on 127.0.0.1")
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("--dir", type=Path, default=Path(".metastore"))
    parser.add_argument("--port", type=int, default=9083)
    args = parser.parse_args(argv)
    if args.action == "stop":
        stop(args.dir)
        return 0
    server = start(args.dir, args.port)
    print(f"metastore {server.uri} (pid {server.pid}, state in {server.state_dir})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
