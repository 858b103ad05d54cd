"""Locations and filesystems: local, HDFS and S3 paths handled the same way.

Spark's logs hold absolute Hadoop URIs (``s3a://b/t/…``, ``hdfs://nn:8020/t/…``,
``file:///t/…``, percent-encoded), while users configure ``s3://b/t`` or a bare path.
:func:`normalize_uri` brings both to one comparable form; :func:`resolve_filesystem` gives
the ``pyarrow.fs`` filesystem to read a location with.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import pyarrow.fs as pafs

from airflow_provider_fscommit.core.object_store import s3_filesystem

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
