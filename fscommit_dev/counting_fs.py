"""A filesystem that counts what is asked of it: how many files a reader lists and opens.

Instrumentation, not a fake: every call goes to the real local filesystem, and the calls
are recorded as ``(operation, path)``. ``counting(monkeypatch, *modules)`` makes those
modules' ``resolve_filesystem`` hand it out.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow.fs as pafs

from airflow_provider_fscommit.core.storage.filesystem import resolve_filesystem


class CountingHandler(pafs.FileSystemHandler):
    """Records each call, then delegates it to ``inner``."""

    def __init__(self, inner: pafs.FileSystem) -> None:
        self.inner = inner
        self.calls: list[tuple[str, str]] = []

    def _call(self, operation: str, path: str, *args: Any) -> Any:
        self.calls.append((operation, path))
        return getattr(self.inner, operation)(path, *args)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CountingHandler) and self.inner.equals(other.inner)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def get_type_name(self) -> str:
        return "counting"

    def normalize_path(self, path: str) -> str:
        return self.inner.normalize_path(path)

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        self.calls.extend(("get_file_info", p) for p in paths)
        return self.inner.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        self.calls.append(("list", selector.base_dir))
        return self.inner.get_file_info(selector)

    def open_input_stream(self, path: str) -> Any:
        return self._call("open_input_stream", path)

    def open_input_file(self, path: str) -> Any:
        return self._call("open_input_file", path)

    def open_output_stream(self, path: str, metadata: Any) -> Any:
        # As on an object store, a write needs no directory made first (the ledger on a
        # filesystem without create-once, single_writer, makes none): not counted.
        self.inner.create_dir(path.rpartition("/")[0])
        return self._call("open_output_stream", path)

    def open_append_stream(self, path: str, metadata: Any) -> Any:
        return self._call("open_append_stream", path)

    def create_dir(self, path: str, recursive: bool) -> None:
        self.calls.append(("create_dir", path))
        self.inner.create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self._call("delete_dir", path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self._call("delete_dir_contents", path, missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        raise NotImplementedError("never on a test filesystem")

    def delete_file(self, path: str) -> None:
        self._call("delete_file", path)

    def move(self, src: str, dest: str) -> None:
        self._call("move", src, dest)

    def copy_file(self, src: str, dest: str) -> None:
        self._call("copy_file", src, dest)


@contextmanager
def counting(monkeypatch, *modules: Any) -> Iterator[list[tuple[str, str]]]:
    """Within, ``modules`` resolve every location to one counting local filesystem;
    yields its list of calls (clear it to count from a point on)."""
    handler = CountingHandler(pafs.LocalFileSystem())
    filesystem = pafs.PyFileSystem(handler)

    def resolve(uri: str) -> tuple[pafs.FileSystem, str]:
        return filesystem, resolve_filesystem(uri)[1]  # the local path of a file:// URI too

    with monkeypatch.context() as patch:
        for module in modules:
            patch.setattr(module, "resolve_filesystem", resolve)
        yield handler.calls
