"""The soak's section of RESULTS.md (issue 59), from its runs in ``results.json``.

One table per question the issue asks: did every check hold, how fresh were the
partitions (committable to visible, and from the last row's arrival; without and with a
fault in their window), where the time went, and what the parts cost (the triggerer's CPU
per waiting partition, memory over the run, metastore calls per committed partition).
"""

from __future__ import annotations

from typing import Any


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return [*out, ""]


def _p(figures: dict[str, Any]) -> str:
    if not figures or not figures.get("count"):
        return "-"
    return f"{figures['p50']} / {figures['p95']} / {figures['max']} s ({figures['count']})"


def render(suite: dict[str, Any]) -> list[str]:
    runs = suite["results"]["runs"]
    lines = [
        "## A production day, compressed (issue 59: `python -m bench.soak`)",
        "",
        "One Airflow 3 deployment (PostgreSQL; scheduler, triggerer, api-server and "
        "dag-processor, LocalExecutor) committing N live minute-partitioned streams of one "
        "Spark application through the DAG factory's DAGs (specs written by `fscommit "
        "init`, deferrable sensors), compacting on one Spark Connect server and committing "
        "to the loopback Hive metastore, while its parts are SIGKILLed on a seeded schedule "
        "and restarted. Freshness: from the commit of the checkpoint batch whose watermark "
        "first passed the partition's time plus the delay, to the first listing of it by a "
        "reader polling the metastore every second. p50 / p95 / max (partitions).",
        "",
    ]
    rows = []
    for name, run in runs.items():
        s = run["settings"]
        ran = run["settings_ran"]
        faults = ", ".join(
            f"{f['kind']}" + (" (missed)" if f.get("missed") else "") for f in run["faults"]
        )
        checks = "all held" if not run["violations"] else f"**{len(run['violations'])} failed**"
        fresh = run["freshness"]
        p95 = (fresh["without_faults"]["freshness_s"] or {}).get("p95")
        goal = "-" if p95 is None else ("met" if p95 <= s["goal_s"] else "**not met**")
        worst = (fresh["with_faults"]["freshness_s"] or {}).get("max")
        bound = "-" if worst is None else ("met" if worst <= s["fault_bound_s"] else "**not met**")
        rows.append(
            [
                name,
                f"{s['tables']} tables, {s['minutes']:g} min",
                f"{ran['started'][:16]} (load {ran['load_before'][0]} before, "
                f"{ran['load_after'][0]} after)",
                faults or "none",
                f"{run['rows']:,} ({run['late_rows']} late)",
                sum(c["committed"] for c in run["counted"].values()),
                checks,
                _p(fresh["without_faults"]["freshness_s"]),
                f"{goal} (≤ {s['goal_s']:g} s)",
                _p(fresh["with_faults"]["freshness_s"]),
                f"{bound} (≤ {s['fault_bound_s']:g} s)",
                _p(fresh["all"]["since_last_row_s"]),
            ]
        )
    lines += _table(
        [
            "run",
            "size",
            "started (1-min load average)",
            "faults",
            "rows",
            "partitions committed",
            "checks",
            "freshness, no fault",
            "goal p95 ≤ poll + 30 s",
            "freshness, fault in window",
            "max within the retry bound",
            "from last row, all",
        ],
        rows,
    )
    for name, run in runs.items():
        lines += _run_detail(name, run)
    return lines


def _run_detail(name: str, run: dict[str, Any]) -> list[str]:
    lines = [f"### {name}", ""]
    machine = run.get("machine")
    if machine:
        lines += [
            f"Machine: {machine['cpu']}, {machine['cores']} cores, {machine['ram_gib']} GiB, "
            f"{machine['os']}; Python {machine['python']}, Spark {machine['spark']}.",
            "",
        ]
    if run.get("reevaluated"):
        lines += [f"_Note: {run['reevaluated']}._", ""]
    for v in run["violations"]:
        lines.append(f"- FAILED `{v['rule']}`: {v['table']} `{v['partition']}`: {v['detail']}")
    if run["violations"]:
        lines.append("")
    if run["faults"]:
        start = run["started_ms"]
        lines += _table(
            ["fault", "planned (s)", "killed at (s)", "down (s)", "target", "missed"],
            [
                [
                    f["kind"],
                    f["planned_s"],
                    "-" if f["killed_ms"] is None else round((f["killed_ms"] - start) / 1000),
                    "-"
                    if f["restarted_ms"] is None
                    else round((f["restarted_ms"] - f["killed_ms"]) / 1000, 1),
                    f["target"] or "",
                    f["missed"] or "",
                ]
                for f in run["faults"]
            ],
        )
    phases = run["freshness"]["phases"]
    if phases:
        lines += [
            f"Where the time goes (partitions without a fault in their window, "
            f"{run['freshness']['phases_count']} of them; median / p95 seconds):",
            "",
            *_table(
                ["sensor poll", "scheduling", "compaction", "commit", "reader's poll"],
                [
                    [
                        f"{phases[k]['median_s']} / {phases[k]['p95_s']}"
                        for k in ("poll", "scheduling", "compaction", "commit", "reader")
                    ]
                ],
            ),
        ]
    res = run["resources"]
    if res:
        trig = res["triggerer"]
        lines += [
            f"Triggerer: {trig['cpu_s']} CPU s over the run, {trig['mean_waiting']} waiting "
            f"partitions on average: {_pct(trig['core_share'])} of a core, "
            f"{_pct(trig['core_share_per_waiting'])} of a core per waiting partition.",
            "",
            "Memory (RSS MiB of each part's process tree at the run's quarters, its peak, "
            "and its growth per 10 minutes over the second half of the last process's life: "
            "a part restarted by a fault starts again):",
            "",
            *_table(
                [
                    "part",
                    "25 %",
                    "50 %",
                    "75 %",
                    "end",
                    "max",
                    "growth / 10 min",
                    "own RSS: end, growth / 10 min",
                    "CPU s",
                ],
                [
                    [
                        part,
                        *m["at_quarters"],
                        m["max"],
                        m["growth_per_10_min"],
                        _own(res.get("rss_self_mib", {}).get(part)),
                        res["cpu_s"][part],
                    ]
                    for part, m in res["rss_mib"].items()
                    if m
                ],
            ),
            "(A tree holds the part's children: the scheduler's its executor's workers and "
            "their running tasks, the Connect server's its Python workers; its own RSS is "
            "the part's process alone.)",
            "",
        ]
    metrics = run.get("metrics")
    if metrics and metrics["tables"]:
        lines += [
            "The provider's metrics as the soak's StatsD received them (tagged names), "
            "against what the soak measured: compaction rows against the rows the table's "
            "committed compactions wrote (its published rows, read back from its files, plus "
            "what rewrites wrote again, from the ledger), freshness by its median. Metrics "
            "received: "
            + ", ".join(f"`{n}`" for n in metrics["names"] if "," not in n and n.count(".") < 3)
            + ", each also with the table (and policy) in its name.",
            "",
            *_table(
                ["table", "compaction.rows", "rows compactions wrote (published)",
                 "partition.freshness (n, median)", "measured (n, median)"],
                [
                    [table, m["compaction_rows"],
                     f"{m.get('compacted_rows', '-')} ({m.get('published_rows', '-')})",
                     f"{m['freshness_count']}, {m['freshness_median_s']} s",
                     f"{m['measured_count']}, {m['measured_median_s']} s"]
                    for table, m in metrics["tables"].items()
                ],
            ),
        ]  # fmt: skip
    meta = run["metastore"]
    per = meta["calls_per_committed_partition"]
    calls = ", ".join(f"{k} {v}" for k, v in sorted(meta["calls"].items(), key=lambda kv: -kv[1]))
    lines += [
        "Metastore calls per committed partition (its audit log, less the reader's "
        f"{meta['reader_listings']} listings): "
        + (f"{per} ({calls})." if per is not None else "not counted (a metastore without "
           "the audit log)."),
        "",
    ]  # fmt: skip
    return lines


def _own(memory: dict[str, Any] | None) -> str:
    if not memory:
        return "-"
    return f"{memory['at_quarters'][-1]}, {memory['growth_per_10_min']}"


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{share * 100:.2f} %"
