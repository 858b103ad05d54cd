"""Iceberg tables of the tests, as pyiceberg reads them back."""

from __future__ import annotations

from collections import Counter
from typing import Any


def iceberg_ids(table: Any) -> dict[tuple, Counter]:
    """Row ids per (dt, hour) as pyiceberg's scan reads ``table``."""
    rows = table.scan(selected_fields=("dt", "hour", "id")).to_arrow().to_pylist()
    out: dict[tuple, Counter] = {}
    for r in rows:
        out.setdefault((r["dt"], r["hour"]), Counter())[r["id"]] += 1
    return out
