"""Bin packing of a partition's files into compaction units (Flink's ``BinPacking``).

Deterministic: items are packed in the order given (the planner sorts by path), so the
same inputs always give the same units and a rerun recomputes the same plan.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def pack(items: Sequence[T], weight: Callable[[T], int], target: int) -> list[list[T]]:
    """Pack in order; a bin is closed when the next item would take it past ``target``.

    A single item heavier than ``target`` gets a bin of its own: files are never split.
    """
    bins: list[list[T]] = []
    current: list[T] = []
    current_weight = 0
    for item in items:
        item_weight = weight(item)
        if current and current_weight + item_weight > target:
            bins.append(current)
            current, current_weight = [], 0
        current.append(item)
        current_weight += item_weight
    if current:
        bins.append(current)
    return bins
