"""Damaging real files the way a crash or a full disk does, for the storage-fault tests."""

from __future__ import annotations

from pathlib import Path


def truncate(path: Path, keep: int) -> None:
    path.write_bytes(path.read_bytes()[:keep])
