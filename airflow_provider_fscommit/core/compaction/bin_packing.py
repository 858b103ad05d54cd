"""Bin packing: a partition's files into compaction units (Flink's ``BinPacking``), and
units into a bounded number of Spark tasks.

Deterministic: items are packed in the order given (the planner sorts by path), so the
same inputs always give the same units and a rerun recomputes the same plan. A unit's
files need not be neighbours in that order.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class _Bin(Generic[T]):
    items: list[T]
    weight: int


# Flink's BinPacking looks back over this many open bins, which keeps packing linear.
LOOKBACK = 10


def pack(items: Sequence[T], weight: Callable[[T], int], target: int) -> list[list[T]]:
    """First fit over the last ``LOOKBACK`` open bins, as Flink's ``BinPacking.pack``.

    An item goes into the oldest open bin it fits in (up to ``target`` inclusive), else
    into a new bin; opening an eleventh bin closes the oldest. Bins come out in the order
    they were opened. A single item heavier than ``target`` gets a bin of its own: files
    are never split. ``[5, 5, 1, 1]`` at 6 gives two bins, not three.
    """
    closed: list[list[T]] = []
    open_bins: deque[_Bin[T]] = deque()
    for item in items:
        item_weight = weight(item)
        fit = next((b for b in open_bins if b.weight + item_weight <= target), None)
        if fit is None:
            fit = _Bin([], 0)
            open_bins.append(fit)
            if len(open_bins) > LOOKBACK:
                closed.append(open_bins.popleft().items)
        fit.items.append(item)
        fit.weight += item_weight
    return closed + [b.items for b in open_bins]


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
