"""Moving a tree that names its own folder inside its files: a venv, a stream's logs."""

from __future__ import annotations

import os
from pathlib import Path


def rewrite_paths(path: Path, old: str, new: str) -> bool:
    """Replace the path ``old`` with ``new`` in the file at ``path``, keeping its modification
    time (what orders a stream's inputs, and keeps copied bytecode valid); whether the file
    named ``old``."""
    content = path.read_bytes()
    if old.encode() not in content:
        return False
    stat = path.stat()
    path.write_bytes(content.replace(old.encode(), new.encode()))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return True
