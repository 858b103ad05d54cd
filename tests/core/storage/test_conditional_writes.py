"""Create-once and compare-and-swap, the same contract on every store.

Local disks and the S3 server for real; HDFS through a filesystem whose rename never
replaces an existing name, as HDFS's does (no HDFS server can run here: this keeps the
HDFS code path covered through pyarrow's filesystem abstraction); the single-writer mode;
and a store that ignores conditional writes (the fault proxy strips the headers).
"""

from __future__ import annotations

import ctypes
import os
import threading
import uuid
from collections.abc import Callable

import pyarrow.fs as pafs
import pytest

from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.storage.conditional_writes import (
    ConditionalStore,
    HadoopConditionalStore,
    LocalConditionalStore,
    S3ConditionalStore,
    SingleWriterStore,
    conditional_store,
)
from airflow_provider_fscommit.core.storage.filesystem import resolve_filesystem
from airflow_provider_fscommit.core.storage.object_store import S3Settings, use_s3_settings
from fscommit_dev.s3_server import ACCESS_KEY, REGION, SECRET_KEY
from tests.support.s3_proxy import S3FaultProxy

_LIBC = ctypes.CDLL(None, use_errno=True)
_AT_FDCWD = -100


class _RenameNeverReplaces(pafs.FileSystemHandler):
    """The local filesystem with HDFS's rename: it fails when the target exists."""

    def __init__(self) -> None:
        self.local = pafs.LocalFileSystem()

    def move(self, src: str, dest: str) -> None:
        # Linux's renameat2(RENAME_NOREPLACE): atomic like HDFS's rename, and like it,
        # failing when the target exists.
        if _LIBC.renameat2(_AT_FDCWD, src.encode(), _AT_FDCWD, dest.encode(), 1) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"rename {src} to {dest}: {os.strerror(error)}")

    def get_type_name(self) -> str:
        return "hdfs-like"

    def normalize_path(self, path: str) -> str:
        return path

    def equals(self, other: object) -> bool:
        return other is self

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self.local.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self.local.get_file_info(selector)

    def create_dir(self, path: str, recursive: bool) -> None:
        self.local.create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self.local.delete_dir(path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self.local.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        raise OSError("not in tests")

    def delete_file(self, path: str) -> None:
        self.local.delete_file(path)

    def copy_file(self, src: str, dest: str) -> None:
        self.local.copy_file(src, dest)

    def open_input_stream(self, path: str) -> pafs.NativeFile:
        return self.local.open_input_stream(path)

    def open_input_file(self, path: str) -> pafs.NativeFile:
        return self.local.open_input_file(path)

    def open_output_stream(self, path: str, metadata: dict) -> pafs.NativeFile:
        return self.local.open_output_stream(path)

    def open_append_stream(self, path: str, metadata: dict) -> pafs.NativeFile:
        return self.local.open_append_stream(path)


@pytest.fixture(params=["local", "hdfs-like", "s3", "single-writer"])
def store(request, tmp_path) -> tuple[ConditionalStore, str]:
    """A store and a directory to write in."""
    kind = request.param
    if kind == "local":
        return LocalConditionalStore(pafs.LocalFileSystem()), str(tmp_path)
    if kind == "hdfs-like":
        return HadoopConditionalStore(pafs.PyFileSystem(_RenameNeverReplaces())), str(tmp_path)
    if kind == "single-writer":
        return SingleWriterStore(pafs.LocalFileSystem()), str(tmp_path)
    server = request.getfixturevalue("s3_env")
    bucket = server.create_bucket(f"cw-{uuid.uuid4().hex[:12]}")
    filesystem, root = resolve_filesystem(f"s3://{bucket}/ledger")
    store = conditional_store(filesystem, root)
    assert isinstance(store, S3ConditionalStore)
    return store, root


def test_create_once(store):
    conditional, root = store
    path = f"{root}/commit-00000001.json"
    assert conditional.read(path) is None
    version = conditional.create(path, b"run A")
    assert version is not None
    assert conditional.create(path, b"run B") is None  # taken
    assert conditional.create(path, b"run A") == version  # a retried write of run A
    assert conditional.read(path).data == b"run A"


def test_replace_and_delete_only_if_unchanged(store):
    conditional, root = store
    path = f"{root}/lock.json"
    first = conditional.create(path, b"lease 1")
    second = conditional.replace(path, b"lease 2", first)
    assert second is not None and second != first
    assert conditional.replace(path, b"lease 3", first) is None  # stale: another took it
    assert conditional.read(path).data == b"lease 2"
    assert conditional.replace(f"{root}/missing.json", b"x", first) is None
    assert not conditional.delete(path, first)
    assert conditional.delete(path, second)
    assert conditional.read(path) is None


def race(action: Callable[[int], object], writers: int = 8) -> list[object]:
    """Run ``action(i)`` in ``writers`` threads released at once; their results."""
    barrier = threading.Barrier(writers)
    results: list[object] = [None] * writers

    def run(i: int) -> None:
        barrier.wait()
        results[i] = action(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


# Not the single-writer mode: it relies on the user's guarantee instead.
@pytest.mark.parametrize("store", ["local", "hdfs-like", "s3"], indirect=True)
def test_of_writers_racing_exactly_one_wins(store):
    conditional, root = store
    for attempt in range(5):
        path = f"{root}/race-{attempt}.json"
        created = race(lambda i, path=path: conditional.create(path, f"run {i}".encode()))
        assert sum(v is not None for v in created) == 1
        winner = next(i for i, v in enumerate(created) if v is not None)
        assert conditional.read(path).data == f"run {winner}".encode()
        version = conditional.read(path).version
        replaced = race(
            lambda i, path=path, version=version: conditional.replace(
                path, f"{i}".encode(), version
            )
        )
        assert sum(v is not None for v in replaced) == 1


@pytest.fixture
def forgetful_store(s3_server):
    """The S3 server behind a proxy that drops If-None-Match / If-Match headers."""
    proxy = S3FaultProxy(s3_server.port)
    proxy.configure(strip_conditions=True)
    settings = S3Settings(proxy.endpoint, REGION, _credentials())
    bucket = s3_server.create_bucket(f"cw-{uuid.uuid4().hex[:12]}")
    with use_s3_settings(settings):
        yield bucket
    proxy.close()


def _credentials():
    from airflow_provider_fscommit.core.storage.object_store import S3Credentials

    return S3Credentials(ACCESS_KEY, SECRET_KEY)


def test_a_store_that_ignores_conditional_writes_is_refused_unless_single_writer(
    forgetful_store,
):
    filesystem, root = resolve_filesystem(f"s3://{forgetful_store}/table/_fscommit")
    with pytest.raises(FsCommitError) as error:
        conditional_store(filesystem, root)
    message = str(error.value)
    assert "does not honour conditional writes" in message
    assert "single_writer: true" in message and "max_active_runs=1" in message
    # Declared single writer: check-then-write, and no probe left behind.
    declared = conditional_store(filesystem, root, single_writer=True)
    assert isinstance(declared, SingleWriterStore)
    assert declared.create(f"{root}/plan-00000000.json", b"plan") is not None
    names = [i.base_name for i in filesystem.get_file_info(pafs.FileSelector(root))]
    assert names == ["plan-00000000.json"]


def test_other_object_stores_need_a_declared_single_writer(tmp_path):
    """GCS and Azure through pyarrow: no preconditions wired, so no silent race either."""
    filesystem, root = resolve_filesystem("gs://lake/tables/events/_fscommit")
    with pytest.raises(FsCommitError, match="declare it with single_writer: true"):
        conditional_store(filesystem, root)
    assert isinstance(conditional_store(filesystem, root, single_writer=True), SingleWriterStore)
