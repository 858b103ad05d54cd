"""The baseline for reading a sink log: ``json.loads`` per line, the obvious way.

What one would write without thinking about scale: read the watermark from the latest
committed batch's offsets, read the newest compact file and the deltas after it line by
line, keep a dict of live paths, group them by directory and judge each partition. It
holds no state between reads, so a re-read after a new batch reads everything again.
It knows only this benchmark's layout (``dt``/``hour`` partitions, UTC, no escaping).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from urllib.parse import unquote, urlsplit


def committable_partitions(
    staging: str, checkpoint: str, delay_ms: int
) -> dict[str, tuple[int, int]]:
    """``{partition: (files, bytes)}`` of the committable partitions."""
    watermark = _watermark_ms(checkpoint)
    log_dir = os.path.join(staging, "_spark_metadata")
    names = [n for n in os.listdir(log_dir) if not n.startswith(".")]
    batches = sorted(names, key=lambda n: int(n.split(".")[0]))
    compacts = [n for n in batches if n.endswith(".compact")]
    start = batches.index(compacts[-1]) if compacts else 0
    live: dict[str, dict] = {}
    for name in batches[start:]:
        with open(os.path.join(log_dir, name)) as handle:
            lines = handle.read().split("\n")[1:]
        for line in lines:
            if line:
                entry = json.loads(line)
                if entry["action"] == "delete":
                    live.pop(entry["path"], None)
                else:
                    live[entry["path"]] = entry
    partitions: dict[str, tuple[int, int]] = {}
    root = staging.rstrip("/") + "/"
    for path, entry in live.items():
        directory = unquote(urlsplit(path).path).rsplit("/", 1)[0]
        partition = directory[len(root) :]
        files, size = partitions.get(partition, (0, 0))
        partitions[partition] = (files + 1, size + entry["size"])
    return {
        partition: summary
        for partition, summary in partitions.items()
        if _partition_ms(partition) + delay_ms < watermark
    }


def _watermark_ms(checkpoint: str) -> int:
    commits = [int(n) for n in os.listdir(os.path.join(checkpoint, "commits")) if n.isdigit()]
    with open(os.path.join(checkpoint, "offsets", str(max(commits)))) as handle:
        return json.loads(handle.read().split("\n")[1])["batchWatermarkMs"]


def _partition_ms(partition: str) -> int:
    values = dict(part.split("=", 1) for part in partition.split("/"))
    moment = datetime.strptime(f"{values['dt']} {values['hour']}", "%Y-%m-%d %H")
    return int(moment.replace(tzinfo=UTC).timestamp() * 1000)
