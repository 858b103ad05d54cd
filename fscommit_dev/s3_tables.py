"""Real Spark streaming output placed on the S3 server as Spark's S3A connector writes it.

Spark here cannot write ``s3a://`` (no hadoop-aws jars), so a real local run (staging,
sink log, checkpoint) is uploaded to the S3 server with the sink log's file URIs
rewritten exactly as S3A records them: ``s3a://bucket/key``, no ``.crc`` checksum files
(S3A writes none), part files and orphans where the query left them.

The independent checker reads only what a reader outside fscommit would: the uploaded sink
log (JSON lines, through boto3) and the Parquet files (through pyarrow's own S3FileSystem).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pyarrow.parquet as pq

from fscommit_dev.s3_server import ACCESS_KEY, REGION, SECRET_KEY, S3Server
from fscommit_dev.streams import QueryDirs


@dataclass(frozen=True)
class S3Table:
    """A streaming table's directories on the S3 server."""

    server: S3Server
    bucket: str
    prefix: str

    @property
    def staging(self) -> str:
        return f"s3a://{self.bucket}/{self.prefix}/staging"

    @property
    def checkpoint(self) -> str:
        return f"s3a://{self.bucket}/{self.prefix}/checkpoint"

    @property
    def table(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}/table"

    def spec(self, **overrides: Any) -> dict[str, Any]:
        return {
            "staging_path": self.staging,
            "checkpoint_path": self.checkpoint,
            "table_path": self.table,
            "partition_keys": "dt,hour",
            "timestamp_pattern": "$dt $hour:00:00",
            "delay": "1 h",
            "policy_kind": "success-file",
            "compaction_file_size": "4KB",
        } | overrides

    def object_keys(self, under: str = "") -> list[str]:
        client = self.server.client()
        prefix = f"{self.prefix}/{under}"
        keys = []
        for page in client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=prefix
        ):
            keys += [item["Key"] for item in page.get("Contents", [])]
        return sorted(keys)


def place_on_s3(stream: QueryDirs, server: S3Server, bucket: str, prefix: str) -> S3Table:
    """Upload ``stream``'s staging and checkpoint under ``s3://bucket/prefix/``."""
    client = server.client()
    local_staging = Path(stream.staging)
    logged_root = local_staging.as_uri()  # Spark 4.3 logs file:///…
    s3a_root = f"s3a://{bucket}/{prefix}/staging"
    for directory, name in ((local_staging, "staging"), (Path(stream.checkpoint), "checkpoint")):
        for path in sorted(directory.rglob("*")):
            if path.is_dir() or path.name.startswith("."):  # .crc files: S3A writes none
                continue
            relative = path.relative_to(directory).as_posix()
            body = path.read_bytes()
            if name == "staging" and relative.startswith("_spark_metadata/"):
                body = _rewrite_log(body, logged_root, s3a_root)
            client.put_object(Bucket=bucket, Key=f"{prefix}/{name}/{relative}", Body=body)
    return S3Table(server, bucket, prefix)


def _rewrite_log(content: bytes, local_root: str, s3a_root: str) -> bytes:
    """A sink log file with every entry's path moved from the local root to S3A's."""
    header, *lines = content.decode().split("\n")
    out = [header]
    for line in lines:
        if line.strip():
            entry = json.loads(line)
            assert entry["path"].startswith(local_root + "/"), entry["path"]
            entry["path"] = s3a_root + entry["path"][len(local_root) :]
            line = json.dumps(entry, separators=(",", ":"))
        out.append(line)
    return "\n".join(out).encode()


def checker_filesystem(server: S3Server) -> pafs.S3FileSystem:
    """pyarrow's S3 filesystem, configured here and not by the code under test."""
    return pafs.S3FileSystem(
        access_key=ACCESS_KEY,
        secret_key=SECRET_KEY,
        region=REGION,
        endpoint_override=server.endpoint,
        scheme="http",
    )


def staged_ids(table: S3Table) -> dict[str, Counter]:
    """Row ids per partition of the files the uploaded sink log commits."""
    client = table.server.client()
    log_keys = [k for k in table.object_keys("staging/_spark_metadata/") if "/." not in k]
    ordered = sorted(log_keys, key=lambda k: int(k.rsplit("/", 1)[1].split(".")[0]))
    compacts = [k for k in ordered if k.endswith(".compact")]
    start = int(compacts[-1].rsplit("/", 1)[1].split(".")[0]) if compacts else -1
    live: dict[str, bool] = {}
    for key in ordered:
        if int(key.rsplit("/", 1)[1].split(".")[0]) < start:
            continue
        body = client.get_object(Bucket=table.bucket, Key=key)["Body"].read().decode()
        for line in body.splitlines()[1:]:
            entry = json.loads(line)
            live[entry["path"]] = entry["action"] != "delete"
    filesystem = checker_filesystem(table.server)
    out: dict[str, Counter] = {}
    for uri, alive in live.items():
        if alive:
            path = uri.removeprefix("s3a://")
            partition = "/".join(path.split("/")[-3:-1])
            out.setdefault(partition, Counter()).update(_ids(filesystem, path))
    return out


def published(table: S3Table) -> tuple[dict[str, Counter], list[str]]:
    """Row ids per partition of the visible published files, and hidden leftovers."""
    filesystem = checker_filesystem(table.server)
    ids: dict[str, Counter] = {}
    hidden = []
    root = f"{table.prefix}/table/"
    for key in table.object_keys("table/"):
        relative = key[len(root) :]
        if relative.startswith("_fscommit/") or key.endswith("/"):
            continue
        name = relative.rsplit("/", 1)[-1]
        if name.startswith("."):
            hidden.append(relative)
        elif name.endswith(".parquet"):
            partition = relative.rsplit("/", 1)[0]
            ids.setdefault(partition, Counter()).update(_ids(filesystem, f"{table.bucket}/{key}"))
    return ids, hidden


def success_files(table: S3Table) -> list[str]:
    root = f"{table.prefix}/table/"
    keys = table.object_keys("table/")
    return [k[len(root) :].rsplit("/", 1)[0] for k in keys if k.endswith("/_SUCCESS")]


def _ids(filesystem: pafs.S3FileSystem, path: str) -> list[int]:
    with filesystem.open_input_file(path) as handle:
        return pq.read_table(handle, columns=["id"]).column("id").to_pylist()


def assert_exactly_once(
    table: S3Table, staged: dict[str, Counter], complete: set[str], settled: bool = True
) -> int:
    """Invariants 1-3 on S3; returns the number of published rows checked.

    ``settled``: no run is unfinished, so no hidden output may be left either.
    """
    ids, hidden = published(table)
    assert hidden == [] or not settled, f"hidden files left behind: {hidden}"
    for partition, counter in ids.items():
        assert not counter - staged[partition], f"{partition}: rows the sink log does not commit"
        assert max(counter.values()) == 1, f"{partition}: a row published twice"
    for partition in complete:
        assert ids.get(partition) == staged[partition], f"{partition}: rows lost"
    return sum(sum(c.values()) for c in ids.values())
