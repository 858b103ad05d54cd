"""Fragmentation: how far a published partition is from one compaction of all its rows.

Late data is compacted on its own and published beside what the partition held (Flink's
way: the partition is committed again), so after a few late batches a partition holds
many small files, and in a sorted table files whose ranges overlap. A partition is
*fragmented* when the compactions whose outputs it holds (two or more) left it with more
files than one compaction of all its rows would make, ⌈bytes / target⌉, plus one; or, in
a sorted table, with rows no longer sorted across its files. Such a partition is
compacted again, its published files together with any new staged ones, into a plan of
its own (a *rewrite*, :func:`.planner.plan_rewrite`).

Only outputs of two or more compactions count: a rewrite's own outputs are one
compaction's, so a partition is never rewritten again until new data lands in it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fragmentation:
    """A partition's published files, and what one compaction of their rows makes."""

    files: int
    bytes: int
    compactions: int  # how many compactions' outputs the files are
    target_file_size: int

    @property
    def one_compaction(self) -> int:
        """The files one compaction of all the partition's bytes makes."""
        return max(1, -(-self.bytes // self.target_file_size))

    def fragmented(self, sorted_table: bool) -> bool:
        """Whether compacting the partition again would lay it out as one compaction."""
        if self.compactions < 2:
            return False
        return sorted_table or self.files > self.one_compaction + 1

    def with_plan(self, files: int, bytes_: int) -> Fragmentation:
        """The partition after one more compaction publishes ``files`` of ``bytes_``."""
        return Fragmentation(
            self.files + files, self.bytes + bytes_, self.compactions + 1, self.target_file_size
        )
