"""DuckDB's ``iceberg_scan``: a reader of Iceberg tables independent of pyiceberg.

DuckDB's extensions come as wheels (``duckdb-extension-iceberg``, ``-avro``) that pin
DuckDB 1.5.5, so they get a venv of their own (a cached build, :func:`fresh_venv`), apart
from the bench's DuckDB. ``INSTALL '<the wheel's file>'`` installs an extension offline.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from tests.support.pythons import cached_venv

PACKAGES = (
    "duckdb==1.5.5",
    "duckdb-extension-iceberg==1.5.5",
    "duckdb-extension-avro==1.5.5",
    "pytz",  # DuckDB's Python client converts time zones with it
)

_READ = """
import json, pathlib, sys
import duckdb, duckdb_extension_avro, duckdb_extension_iceberg

connection = duckdb.connect()
for module, name in ((duckdb_extension_avro, "avro"), (duckdb_extension_iceberg, "iceberg")):
    (file,) = pathlib.Path(module.__file__).parent.glob("extensions/*/*.duckdb_extension")
    connection.execute(f"INSTALL '{file}'")
    connection.execute(f"LOAD {name}")
scan = f"iceberg_scan('{sys.argv[1]}')"
types = {row[0]: row[1] for row in connection.execute(f"DESCRIBE SELECT * FROM {scan}").fetchall()}
rows = connection.execute(sys.argv[2].format(scan=scan)).fetchall()
print(json.dumps({"types": types, "rows": rows}, default=str))
"""


def duckdb_python(directory: Path) -> Path:
    """A venv's Python with DuckDB and its Iceberg and Avro extensions."""
    return cached_venv(
        Path(sys.base_prefix) / "bin" / "python3", *PACKAGES, scratch=directory / "duckdb"
    )


def duckdb_query(
    python: Path, metadata_location: str, query: str = "SELECT dt, hour, id FROM {scan}"
) -> tuple[dict[str, str], list[list]]:
    """The table's column types and ``query``'s rows (``{scan}``: the table), as DuckDB
    reads the metadata file."""
    done = subprocess.run(
        [str(python), "-c", _READ, metadata_location.removeprefix("file://"), query],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    read = json.loads(done.stdout)
    return read["types"], read["rows"]


def duckdb_scan(
    python: Path, metadata_location: str
) -> tuple[dict[str, str], dict[tuple, Counter]]:
    """The table's column types and ids per (dt, hour), as DuckDB reads the metadata file."""
    types, rows = duckdb_query(python, metadata_location)
    ids: dict[tuple, Counter] = {}
    for dt, hour, row_id in rows:
        ids.setdefault((dt, hour), Counter())[row_id] += 1
    return types, ids
