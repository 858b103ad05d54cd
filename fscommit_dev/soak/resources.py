"""The resource figures of a soak run, from the observer's ``/proc`` samples.

Memory must stay flat over a run that in production lasts months: each part's resident
memory is reported at the quarters of the run, its peak, and its growth per ten minutes
over the second half of the last process's life (a line fitted by least squares; the
first half holds the start-up, and a restarted part starts again from nothing).
The triggerer's CPU is divided by what it held: the CPU seconds it used over the deferred
task instances' waiting seconds is the share of a core one waiting partition costs.
A restarted part's samples start again from a new process: its CPU is counted per
process, not as one decreasing total.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

MIB = 2**20


def summarize(samples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    if len(samples) < 2:
        return {}
    names = sorted({name for s in samples for name in s["parts"]})
    of = {name: [s for s in samples if name in s["parts"]] for name in names}
    return {
        "samples": len(samples),
        "rss_mib": {name: _memory(of[name], name, "rss") for name in names},
        "rss_self_mib": {name: _memory(of[name], name, "rss_self") for name in names},
        "cpu_s": {name: round(_cpu(samples, name), 1) for name in names},
        "triggerer": _triggerer(samples),
    }


def _memory(samples: Sequence[dict[str, Any]], name: str, key: str) -> dict[str, Any]:
    """A part's memory (``rss``: its process tree's; ``rss_self``: its own) over the run."""
    values = [(s["t_ms"] / 1000, s["parts"][name].get(key, 0) / MIB) for s in samples]
    if not values:
        return {}
    quarters = [
        values[min(len(values) - 1, int(q * (len(values) - 1)))][1] for q in (0.25, 0.5, 0.75, 1)
    ]
    # The growth of the process running at the end (a restarted part's new process),
    # over the second half of its life.
    last_pid = samples[-1]["parts"][name]["pid"]
    last = [v for s, v in zip(samples, values, strict=True) if s["parts"][name]["pid"] == last_pid]
    second_half = last[len(last) // 2 :]
    return {
        "at_quarters": [round(v) for v in quarters],
        "max": round(max(v for _, v in values)),
        "growth_per_10_min": round(_slope(second_half) * 600, 1),
    }


def _slope(points: Sequence[tuple[float, float]]) -> float:
    if len(points) < 2:
        return 0.0
    mean_t = sum(t for t, _ in points) / len(points)
    mean_v = sum(v for _, v in points) / len(points)
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    return sum((t - mean_t) * (v - mean_v) for t, v in points) / spread if spread else 0.0


def _cpu(samples: Sequence[dict[str, Any]], name: str) -> float:
    """CPU seconds of a part over the run, a new process's counted from its first sample."""
    total = 0.0
    previous: dict[str, Any] | None = None
    for sample in samples:
        current = sample["parts"].get(name)
        if current is None:
            continue
        if previous is not None and previous["pid"] == current["pid"]:
            total += max(0.0, current["cpu_s"] - previous["cpu_s"])
        previous = current
    return total


def _triggerer(samples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The triggerer's CPU per waiting partition: its CPU seconds over the deferred task
    instances' waiting seconds, between each two samples."""
    cpu = 0.0
    waiting_s = 0.0
    for before, after in itertools.pairwise(samples):
        a, b = before["parts"].get("triggerer"), after["parts"].get("triggerer")
        if a is None or b is None or a["pid"] != b["pid"] or "deferred" not in before:
            continue
        cpu += max(0.0, b["cpu_s"] - a["cpu_s"])
        waiting_s += before["deferred"] * (after["t_ms"] - before["t_ms"]) / 1000
    span_s = (samples[-1]["t_ms"] - samples[0]["t_ms"]) / 1000
    deferred = [s["deferred"] for s in samples if "deferred" in s]
    return {
        "cpu_s": round(cpu, 1),
        "mean_waiting": round(sum(deferred) / len(deferred), 1) if deferred else None,
        "core_share": round(cpu / span_s, 4) if span_s else None,
        "core_share_per_waiting": round(cpu / waiting_s, 5) if waiting_s else None,
    }
