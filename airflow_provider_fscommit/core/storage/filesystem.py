"""Locations and filesystems: local, HDFS and S3 paths handled the same way.

Spark's logs hold absolute Hadoop URIs (``s3a://b/t/…``, ``hdfs://nn:8020/t/…``,
``file:///t/…``, percent-encoded), while users configure ``s3://b/t`` or a bare path.
:func:`normalize_uri` brings both to one comparable form; :func:`resolve_filesystem` gives
the ``pyarrow.fs`` filesystem to read a location with.

The second half holds the small operations the ledger and the publisher share. They are
written so that a reader (or a rerun after a crash) sees either nothing or the complete
file: on local disks and HDFS to a hidden temporary name first and then renamed; on object
stores directly, since an object appears only once its upload is complete (a rename there
would be a copy and a delete).
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import pyarrow.fs as pafs

from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.storage.object_store import explain, s3_filesystem

# Hadoop's S3 connectors are one store under three scheme names.
_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3"}


@dataclass(frozen=True)
class Location:
    """A normalized location. ``scheme`` None means "as configured, any filesystem"."""

    scheme: str | None
    authority: str
    path: str

    def __str__(self) -> str:
        if self.scheme is None:
            return self.path
        return f"{self.scheme}://{self.authority}{self.path}"


def normalize_uri(uri: str) -> Location:
    """Parse a URI (percent-decoded) or a bare path (taken literally, made absolute)."""
    parts = urlsplit(uri)
    if len(parts.scheme) > 1:  # one letter would be a Windows drive, not a scheme
        scheme = _SCHEME_ALIASES.get(parts.scheme.lower(), parts.scheme.lower())
        path = posixpath.normpath(unquote(parts.path) or "/")
        return Location(scheme, parts.netloc, "/" + path.lstrip("/"))
    return Location(None, "", os.path.abspath(uri))


def is_within(inner: Location, outer: Location) -> bool:
    """Whether ``inner`` is ``outer`` or below it; an unset scheme matches any scheme."""
    if (inner.scheme and outer.scheme) and (
        inner.scheme != outer.scheme or inner.authority != outer.authority
    ):
        return False
    root = outer.path.rstrip("/")
    return inner.path == outer.path or inner.path.startswith(root + "/")


def relative_path(inner: Location, outer: Location) -> str | None:
    """``inner``'s path below ``outer`` (``''`` when equal), or None when not within."""
    if not is_within(inner, outer):
        return None
    return inner.path[len(outer.path.rstrip("/")) :].lstrip("/")


def resolve_filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow filesystem that holds ``uri`` and the path to use with it.

    S3 filesystems come from :mod:`object_store` (the settings in effect, one per bucket);
    other schemes (``hdfs://``, ``gs://``…) from pyarrow's own URI resolution.
    """
    location = normalize_uri(uri)
    if location.scheme in (None, "file"):
        return pafs.LocalFileSystem(), location.path
    if location.scheme == "s3":
        return s3_filesystem(location.authority), f"{location.authority}{location.path}"
    filesystem, path = pafs.FileSystem.from_uri(
        f"{location.scheme}://{location.authority}{location.path}"
    )
    return filesystem, path


def write_atomically(filesystem: pafs.FileSystem, path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` so that it appears complete or not at all.

    A full or read-only disk fails here: the temporary file is removed and the error names
    the file, so the run stops with one clear message and a rerun starts clean.
    """
    directory, _, name = path.rpartition("/")
    if not renames_atomically(filesystem):
        try:
            with filesystem.open_output_stream(path) as stream:
                stream.write(data)
        except OSError as exc:
            raise explain(exc) or unwritable(path, exc) from exc
        return
    temporary = f"{directory}/.{name}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        filesystem.create_dir(directory, recursive=True)
        with filesystem.open_output_stream(temporary) as stream:
            stream.write(data)
        filesystem.move(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            filesystem.delete_file(temporary)
        raise unwritable(path, exc) from exc


def renames_atomically(filesystem: pafs.FileSystem) -> bool:
    """Local disks and HDFS rename atomically; object stores copy and delete."""
    return isinstance(filesystem, (pafs.LocalFileSystem, pafs.HadoopFileSystem))


def unwritable(path: str, exc: BaseException) -> FsCommitError:
    """The error of a write that failed: what to fix, and that nothing was published."""
    return FsCommitError(
        f"cannot write {path}: {exc}; make room on (or make writable) the table "
        "directory and rerun: nothing new was published"
    )


def write_json(filesystem: pafs.FileSystem, path: str, document: Any) -> None:
    write_atomically(filesystem, path, json.dumps(document, indent=1, sort_keys=True).encode())


def read_json(filesystem: pafs.FileSystem, path: str) -> Any:
    with filesystem.open_input_stream(path) as stream:
        return json.loads(stream.read())


def delete_if_exists(filesystem: pafs.FileSystem, path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        filesystem.delete_file(path)


def delete_dir_if_exists(filesystem: pafs.FileSystem, path: str) -> None:
    """Delete a directory and everything under it (on object stores: the prefix)."""
    with contextlib.suppress(FileNotFoundError):
        filesystem.delete_dir(path)


def exists(filesystem: pafs.FileSystem, path: str) -> bool:
    return filesystem.get_file_info(path).type != pafs.FileType.NotFound


def list_names(filesystem: pafs.FileSystem, directory: str) -> list[str]:
    """Base names in ``directory`` (empty when it does not exist), sorted."""
    try:
        infos = filesystem.get_file_info(pafs.FileSelector(directory, recursive=False))
    except FileNotFoundError:
        return []
    return sorted(info.base_name for info in infos)
