"""A real S3 REST API server on 127.0.0.1 for the tests: moto's, in a process of its own.

``python -m fscommit_dev.s3_server STATE_DIR`` serves moto's S3 (and IAM, for the credential
tests, and the Glue Data Catalog API) and writes its port to ``STATE_DIR/port``;
:class:`S3Server` starts it, makes buckets and clients, and stops it by PID.

Glue calls are logged (``glue_calls``: which operations reached the catalog) and faults
are injected at the server (``inject_glue_fault``): a call answered with an error code
(throttling, a refusal), or one partition of a batch call answered with an error entry
in Glue's own ``Errors`` list while the rest of the batch is applied. Fault injection is
the one place the server departs from what AWS would do on its own.

One correction to moto, so that it has the semantics S3 documents: moto checks a
conditional write's precondition and then writes, without a lock, on a multi-threaded
server, so two concurrent ``If-None-Match: *`` PUTs of one key can both succeed (seen here
about once in 300 races). S3 makes a conditional write atomic, and the protocol under test
relies on exactly that, so writes (PUT, POST, DELETE) are applied one at a time; reads
stay concurrent.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ACCESS_KEY = "AKIAFSCOMMITTEST0001"
SECRET_KEY = "fscommit-test-secret-key"
REGION = "us-east-1"
_WRITES = {"PUT", "POST", "DELETE"}


def aws_connection_env(
    server: S3Server, conn_id: str, secret_key: str = SECRET_KEY
) -> dict[str, str]:
    """An Airflow AWS connection to the server (as an environment variable), and no AWS
    variables of the test's own: everything an Airflow task needs is in the connection."""
    connection = {
        "conn_type": "aws",
        "login": ACCESS_KEY,
        "password": secret_key,
        "extra": {"endpoint_url": server.endpoint, "region_name": REGION},
    }
    return {
        f"AIRFLOW_CONN_{conn_id.upper()}": json.dumps(connection),
        "AWS_EC2_METADATA_DISABLED": "true",
    }


class _OneWriteAtATime:
    """WSGI middleware: apply S3 writes one at a time (S3's atomic conditional writes)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") not in _WRITES:
            return self.app(environ, start_response)
        with self.lock:
            return list(self.app(environ, start_response))


_GLUE_TARGET = "AWSGlue."
# Where a batch call's request lists its partitions, and its answer's error entries name one.
_BATCH_ENTRIES = {
    "BatchCreatePartition": ("PartitionInputList", "Values", "PartitionValues"),
    "BatchUpdatePartition": ("Entries", "PartitionValueList", "PartitionValueList"),
}


class _GlueFaults:
    """WSGI middleware: log Glue operations, answer the faults ``glue-faults.json`` names."""

    def __init__(self, app: Any, state_dir: Path) -> None:
        self.app = app
        self.calls = state_dir / "glue-calls.log"
        self.faults = state_dir / "glue-faults.json"
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if not target.startswith(_GLUE_TARGET):
            return self.app(environ, start_response)
        operation = target[len(_GLUE_TARGET) :]
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        with self.lock:
            with self.calls.open("a") as log:
                log.write(operation + "\n")
            fault = self._take(operation, json.loads(body or b"{}"))
        if fault is not None and "values" not in fault:
            answer = json.dumps({"__type": fault["code"], "message": "injected"}).encode()
            headers = [("Content-Type", "application/x-amz-json-1.1")]
            start_response("400 Bad Request", [*headers, ("Content-Length", str(len(answer)))])
            return [answer]
        if fault is None:
            environ["wsgi.input"] = io.BytesIO(body)
            return self.app(environ, start_response)
        listed, key, error_key = _BATCH_ENTRIES[operation]
        request = json.loads(body)
        request[listed] = [e for e in request[listed] if e[key] != fault["values"]]
        forwarded = json.dumps(request).encode()
        environ["wsgi.input"] = io.BytesIO(forwarded)
        environ["CONTENT_LENGTH"] = str(len(forwarded))
        status: list[Any] = []
        answer = json.loads(b"".join(self.app(environ, lambda *a: status.append(a))) or b"{}")
        error = {"ErrorCode": fault["code"], "ErrorMessage": "injected"}
        answer.setdefault("Errors", []).append({error_key: fault["values"], "ErrorDetail": error})
        text = json.dumps(answer).encode()
        headers = [(k, v) for k, v in status[0][1] if k.lower() != "content-length"]
        start_response(status[0][0], [*headers, ("Content-Length", str(len(text)))])
        return [text]

    def _take(self, operation: str, request: dict[str, Any]) -> dict[str, Any] | None:
        """The first armed fault for this call (its count taken down by one), or None."""
        if not self.faults.exists():
            return None
        faults = json.loads(self.faults.read_text())
        for fault in faults:
            if fault["operation"] != operation or fault["times"] <= 0:
                continue
            if "values" in fault:
                listed, key, _ = _BATCH_ENTRIES[operation]
                if all(e[key] != fault["values"] for e in request.get(listed, [])):
                    continue
            fault["times"] -= 1
            self.faults.write_text(json.dumps(faults))
            return fault
        return None


def serve(state_dir: Path) -> None:
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    app = _GlueFaults(_OneWriteAtATime(DomainDispatcherApplication(create_backend_app)), state_dir)
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)
    (state_dir / "port.tmp").write_text(str(server.server_address[1]))
    (state_dir / "port.tmp").rename(state_dir / "port")
    server.serve_forever()


class S3Server:
    """A running moto S3 server (a child process), its endpoint and test credentials."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        state_dir.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            (state_dir / "port").unlink()
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fscommit_dev.s3_server", str(state_dir)],
            cwd=ROOT,
            env=env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=open(state_dir / "server.log", "ab"),  # noqa: SIM115 (the child keeps it)
        )
        deadline = time.monotonic() + 60
        while not (state_dir / "port").exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the S3 server did not start; see {state_dir}/server.log")
            time.sleep(0.1)
        self.port = int((state_dir / "port").read_text())
        self.endpoint = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def env(self, endpoint: str | None = None) -> dict[str, str]:
        """The standard AWS variables that point a client (pyarrow, boto3) at this server."""
        return {
            "AWS_ENDPOINT_URL": endpoint or self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,  # boto3's name (AWS_REGION: the other SDKs')
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def client(self, service: str = "s3", **credentials: str) -> Any:
        import boto3

        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=credentials.get("access_key", ACCESS_KEY),
            aws_secret_access_key=credentials.get("secret_key", SECRET_KEY),
        )

    def create_bucket(self, name: str) -> str:
        self.client().create_bucket(Bucket=name)
        return name

    def glue_calls(self) -> list[str]:
        """The Glue operations the server answered so far, in order."""
        log = self.state_dir / "glue-calls.log"
        return log.read_text().split() if log.exists() else []

    def inject_glue_fault(
        self, operation: str, code: str, times: int = 1, values: list[str] | None = None
    ) -> None:
        """Answer the next ``times`` ``operation`` calls with ``code``; with ``values``, only
        that partition's entry of a batch call (the rest of the batch is applied)."""
        faults_file = self.state_dir / "glue-faults.json"
        faults = json.loads(faults_file.read_text()) if faults_file.exists() else []
        fault: dict[str, Any] = {"operation": operation, "code": code, "times": times}
        if values is not None:
            fault["values"] = values
        faults_file.write_text(json.dumps([*faults, fault]))

    def set_auth(self, enforced: bool) -> None:
        """Turn moto's IAM checks on (from the next request) or off."""
        request = urllib.request.Request(
            f"{self.endpoint}/moto-api/reset-auth",
            data=b"0" if enforced else b"inf",
            headers={"Content-Type": "text/plain"},
            method="POST",
        )
        urllib.request.urlopen(request, timeout=10).read()


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
