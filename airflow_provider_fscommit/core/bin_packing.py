"""Bin packing: a partition's files into compaction units (Flink's ``BinPacking``), and
units into a bounded number of Spark tasks.

Deterministic: items are packed in the order given (the planner sorts by path), so the
same inputs always give the same units and a rerun recomputes the same plan.
"""

from __future__ import annotations

import heapq
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


def balance(items: Sequence[T], weight: Callable[[T], int], groups: int) -> list[list[T]]:
    """Spread items over at most ``groups`` groups of similar total weight.

    Longest processing time first: the heaviest remaining item goes to the lightest group,
    which is within 4/3 of the best possible makespan. Used to run many small units in few
    Spark tasks: each task costs tens of milliseconds of scheduling and Python worker
    round trips, which dominate when a sweep compacts hundreds of small partitions.
    """
    if groups < 1:
        raise ValueError(f"groups must be at least 1, not {groups}")
    heap: list[tuple[int, int]] = [(0, g) for g in range(min(groups, len(items)))]
    out: list[list[T]] = [[] for _ in heap]
    for item in sorted(items, key=weight, reverse=True):
        load, g = heapq.heappop(heap)
        out[g].append(item)
        heapq.heappush(heap, (load + weight(item), g))
    return out
