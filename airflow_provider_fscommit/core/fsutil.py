"""Small filesystem operations shared by the ledger and the publisher.

Everything is written so that a reader (or a rerun after a crash) sees either nothing or
the complete file: on local disks and HDFS to a hidden temporary name first and then
renamed; on object stores directly, since an object appears only once its upload is
complete (a rename there would be a copy and a delete).
"""

from __future__ import annotations

import contextlib
import json
import uuid
from typing import Any

import pyarrow.fs as pafs

from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.object_store import explain


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
    return isinstance(filesystem, pafs.LocalFileSystem | pafs.HadoopFileSystem)


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


def exists(filesystem: pafs.FileSystem, path: str) -> bool:
    return filesystem.get_file_info(path).type != pafs.FileType.NotFound


def list_names(filesystem: pafs.FileSystem, directory: str) -> list[str]:
    """Base names in ``directory`` (empty when it does not exist), sorted."""
    try:
        infos = filesystem.get_file_info(pafs.FileSelector(directory, recursive=False))
    except FileNotFoundError:
        return []
    return sorted(info.base_name for info in infos)
