"""The staging table: the committed files of a Spark file sink, grouped by partition.

Built on the sink log, so files of failed batches (orphans) never take part; they are
found by comparing a listing with the log, using Spark's own rule for hidden names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from airflow_provider_fscommit.core.compat import strict_zip
from airflow_provider_fscommit.core.errors import SinkLogError
from airflow_provider_fscommit.core.formats.arrow_arrays import string_array
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.spark.sink_log import FileSinkLog, SinkLogSnapshot
from airflow_provider_fscommit.core.storage.filesystem import (
    normalize_uri,
    relative_path,
    resolve_filesystem,
)


@dataclass(frozen=True)
class StagedFile:
    """A committed file in staging, named by the URI its sink log records."""

    uri: str
    size: int


@dataclass(frozen=True)
class StagingPartition:
    """One partition's committed files in staging, summarized."""

    spec: PartitionSpec
    path: str
    files: int
    bytes: int
    creation_time_ms: int  # the first committed file's modification time
    last_modified_ms: int  # the newest committed file's: the idle-time trigger's clock


@dataclass(frozen=True)
class OrphanReport:
    """Differences between the staging directory and its log, as relative paths.

    ``in_flight_files`` are not in the log yet but younger than the latest committed
    batch: the running batch's files, or those of a batch that failed and has not been
    redone yet. Once a later batch commits, the ones still unlogged are orphans.
    """

    orphan_files: list[str]
    missing_files: list[str]
    in_flight_files: list[str]


def is_hidden(name: str) -> bool:
    """Spark's rule for names its file index skips (``_x`` unless ``_x=v``, ``.x``)."""
    return (
        (name.startswith("_") and "=" not in name)
        or name.startswith(".")
        or name.endswith("._COPYING_")
    )


# Keys an S3 listing returns per request (ListObjectsV2's page).
_LISTING_PAGE = 1000
# What a URI's normalization could change in a path: escapes, empty or dot segments.
_NOT_PLAIN = re.compile(r"%|//|(^|/)\.|/$")
_EMPTY_OR_NOT_PLAIN = f"^$|{_NOT_PLAIN.pattern}"


class StagingTable:
    """A file sink's committed output, read incrementally through its sink log."""

    def __init__(
        self, staging_uri: str, partition_keys: tuple[str, ...], default_name: str
    ) -> None:
        self.staging_uri = staging_uri
        self.partition_keys = tuple(partition_keys)
        self.default_name = default_name
        self._root = normalize_uri(staging_uri)
        self._log = FileSinkLog(staging_uri)
        # Logged directory URI -> its partition path, or None when outside the root: found
        # once per partition, not on every poll (its values are parsed only when a
        # partition is summarized). Bounded by the partitions.
        self._paths: dict[str, str | None] = {}
        # The snapshot :meth:`counts` last counted, and its answer.
        self._counted: tuple[SinkLogSnapshot, dict[str, int]] | None = None
        # Directory URI -> its partition as last read: reused while unchanged, so a poll
        # of a big table creates objects only for the partitions that got new files.
        self._partitions: dict[str, StagingPartition] = {}
        # The snapshot :meth:`partitions` last summarized, and its answer: the same snapshot
        # (an unchanged log) is answered again without a pass over its directories.
        self._listed: tuple[SinkLogSnapshot, list[StagingPartition]] | None = None
        # Partition path -> its logged directory URI, and directory URI -> its row in the
        # snapshot of ``_indexed`` (its latest batch and directory count), for a look at one
        # partition.
        self._by_path: dict[str, str] = {}
        self._rows: dict[str, int] = {}
        self._indexed: tuple[int | None, int] | None = None
        # The root as the log spells it (``file:/…/staging/``), learnt from a directory.
        self._logged_prefix: str | None = None

    def snapshot(self) -> SinkLogSnapshot:
        return self._log.read()

    def counts(self, snapshot: SinkLogSnapshot) -> dict[str, int]:
        """Each partition's committed files, by partition path: what a run checks its
        table state against, without a partition's values parsed or its files summarized
        (a year-old table has thousands of partitions, and a run acts on a few)."""
        if self._counted is not None and self._counted[0] is snapshot:
            return self._counted[1]
        summary = snapshot.directories
        counts: dict[str, int] = {}
        outside: list[str] = []
        for directory, path, files in strict_zip(
            *self._paths_of(summary["dir"]), summary["files"].to_pylist()
        ):
            if path is None:
                outside.append(directory)
            else:
                counts[path] = files
        self._refuse_outside(outside)
        self._counted = (snapshot, counts)
        return counts

    def partitions(
        self, snapshot: SinkLogSnapshot, only: Collection[str] | None = None
    ) -> list[StagingPartition]:
        """Every partition with committed files (of ``only``, when given), sorted by path."""
        if only is not None:
            return self._some_partitions(snapshot, only)
        if self._listed is not None and self._listed[0] is snapshot:
            return list(self._listed[1])
        summary = snapshot.directories
        current: dict[str, StagingPartition] = {}
        outside: list[str] = []
        for directory, *facts in strict_zip(
            *(summary[name].to_pylist() for name in summary.column_names)
        ):
            cached = self._partitions.get(directory)
            if cached is None or (
                cached.files,
                cached.bytes,
                cached.creation_time_ms,
                cached.last_modified_ms,
            ) != tuple(facts):
                known = self._directory(directory)
                if known is None:
                    outside.append(directory)
                    continue
                cached = StagingPartition(known[1], known[0], *facts)
            current[directory] = cached
        self._partitions = current
        self._refuse_outside(outside)
        listed = sorted(current.values(), key=lambda p: p.path)
        self._listed = (snapshot, listed)
        return list(listed)

    def _some_partitions(
        self, snapshot: SinkLogSnapshot, only: Collection[str]
    ) -> list[StagingPartition]:
        """The partitions of ``only`` with committed files, sorted by path; the others'
        are neither summarized nor forgotten (their next full listing reuses them)."""
        counts = self.counts(snapshot)  # refuses a directory outside the root
        return sorted(
            (
                found
                for path in only
                if path in counts and (found := self.partition(snapshot, path)) is not None
            ),
            key=lambda p: p.path,
        )

    def partition(self, snapshot: SinkLogSnapshot, path: str) -> StagingPartition | None:
        """One partition's committed files, summarized (None: the query wrote none yet).

        A waiting sensor looks at one partition of a table that may be years old: this
        costs a lookup, not a pass over every partition. Directories are parsed only when
        the sink log has committed a new batch since the last look.
        """
        summary = snapshot.directories
        indexed = (snapshot.latest_batch, summary.num_rows)
        if self._indexed != indexed:
            self._index(summary, indexed)
        directory = self._by_path.get(path)
        row = None if directory is None else self._rows.get(directory)
        if row is not None and summary["dir"][row].as_py() != directory:
            self._index(summary, indexed)  # the same log summarized in another order
            row = self._rows.get(directory)
        if directory is None or row is None:
            return None
        facts = tuple(summary[name][row].as_py() for name in summary.column_names[1:])
        cached = self._partitions.get(directory)
        if (
            cached is not None
            and (
                cached.files,
                cached.bytes,
                cached.creation_time_ms,
                cached.last_modified_ms,
            )
            == facts
        ):
            return cached
        known = self._directory(directory)
        assert known is not None  # indexed under its path
        return StagingPartition(known[1], known[0], *facts)

    def _index(self, summary: pa.Table, indexed: tuple[int | None, int]) -> None:
        """Each logged directory's row, and its partition path (parsed once per directory)."""
        directories, paths = self._paths_of(summary["dir"])
        self._refuse_outside([d for d, p in strict_zip(directories, paths) if p is None])
        self._rows = {d: i for i, d in enumerate(directories)}
        self._indexed = indexed

    def _refuse_outside(self, outside: list[str]) -> None:
        if outside:
            raise SinkLogError(
                f"the sink log of {self.staging_uri} lists committed files outside it, e.g. "
                f"under {min(outside)}: the directory was moved or copied after the query "
                "wrote it (the log holds absolute paths). Point the staging path at the "
                "directory the query writes, or restart the query on the new location"
            )

    def committed_files(
        self, snapshot: SinkLogSnapshot, partitions: set[str]
    ) -> dict[str, list[StagedFile]]:
        """The committed files of the given partitions (relative paths), by partition."""
        out: dict[str, list[StagedFile]] = {p: [] for p in partitions}
        if not out:  # a run with nothing to read records of: no pass over a year's log
            return out
        wanted = {
            directory: path
            for directory, path in strict_zip(*self._paths_of(snapshot.directories["dir"]))
            if path is not None and path in out
        }
        if not wanted:
            return out
        files = snapshot.files.filter(
            pc.is_in(snapshot.files["dir"], value_set=string_array(list(wanted)))
        )
        for uri, size, directory in strict_zip(
            *(files[name].to_pylist() for name in ("path", "size", "dir"))
        ):
            out[wanted[directory]].append(StagedFile(uri, size))
        return out

    def _directory(self, directory: str) -> tuple[str, PartitionSpec] | None:
        """A logged directory's partition path and values (None: outside the root)."""
        path = self._path(directory)
        if path is None:
            return None
        return path, PartitionSpec.parse(path, self.partition_keys, self.default_name)

    def _paths_of(self, directories: pa.ChunkedArray) -> tuple[list[str], list[str | None]]:
        """The logged ``directories`` and each one's partition path (None: outside the
        root), as :meth:`_path` finds them. Where the log spells every directory plainly
        under the root it spells once (:meth:`_relative`), the paths are cut from the
        column by Arrow's kernels: a year-old log has thousands of directories."""
        names = directories.to_pylist()
        if names and self._logged_prefix is None:
            self._path(names[0])  # learns how the log spells the root, if it is plain
        prefix = self._logged_prefix
        if prefix is None or not names or all(name in self._paths for name in names):
            return names, [self._path(name) for name in names]
        # No Python value as an operand: converting one to an Arrow scalar imports pandas.
        rest = pc.utf8_slice_codeunits(directories, len(prefix))
        elsewhere = pc.invert(pc.starts_with(directories, prefix))
        if pc.any(pc.or_(elsewhere, pc.match_substring_regex(rest, _EMPTY_OR_NOT_PLAIN))).as_py():
            return names, [self._path(name) for name in names]
        paths: list[str | None] = rest.to_pylist()
        self._paths.update(strict_zip(names, paths))
        by_path = self._by_path
        for directory, path in strict_zip(names, paths):
            by_path.setdefault(path, directory)
        return names, paths

    def _path(self, directory: str) -> str | None:
        """A logged directory's partition path (None: outside the root)."""
        if directory not in self._paths:
            path = self._relative(directory)
            if path is not None:
                self._by_path.setdefault(path, directory)
            self._paths[directory] = path
        return self._paths[directory]

    def _relative(self, directory: str) -> str | None:
        """A logged directory's path below the root, as named on disk (None: outside).

        The log names every directory with the same prefix (the root as Spark qualified
        it): once one directory shows that prefix, another with a plain remainder (nothing
        percent-encoded, no dot or empty segment) is that remainder, without parsing a URI
        per directory of a year-old log.
        """
        prefix = self._logged_prefix
        if prefix is not None and directory.startswith(prefix):
            rest = directory[len(prefix) :]
            if rest and not _NOT_PLAIN.search(rest):
                return rest
        relative = relative_path(normalize_uri(directory), self._root)
        if relative and prefix is None and directory.endswith("/" + relative):
            self._logged_prefix = directory[: -len(relative)]
        return relative

    def logged_relative_paths(
        self, snapshot: SinkLogSnapshot, partitions: Collection[str] | None = None
    ) -> set[str]:
        """Committed files as paths relative to the staging root (as named on disk), of
        ``partitions`` only when given."""
        if partitions is None:
            uris = snapshot.files["path"].to_pylist()
        else:
            by_partition = self.committed_files(snapshot, set(partitions))
            uris = [f.uri for files in by_partition.values() for f in files]
        return {r for r in map(self._relative, uris) if r is not None}

    def orphans(
        self,
        snapshot: SinkLogSnapshot,
        settle: Callable[[], tuple[SinkLogSnapshot, int | None]],
        partitions: Collection[str] | None = None,
    ) -> OrphanReport:
        """Data files on disk the log does not list, and logged files that are gone, in
        ``partitions`` (None: the whole directory, new partition folders included).

        A listing of the whole directory costs a request per 1,000 files on S3 (a stat per
        file on a local disk), which grows with the stream's age; one per partition costs a
        request each. The partitions are listed one by one when that is fewer requests,
        else the whole directory is listed and what is outside them left out.

        The listing comes after ``snapshot``, so a logged file it lacks is truly gone. A
        file it has and the snapshot lacks may have been committed since, or belong to
        the batch running now: ``settle`` reads the log again, after the checkpoint, and
        returns it with the latest commit's time. Batches run one after another, so an
        unlogged file written before that commit belongs to an attempt that failed.
        """
        filesystem, root = resolve_filesystem(self.staging_uri)
        root = root.rstrip("/")
        wanted = None if partitions is None else set(partitions)
        whole = wanted is None or len(wanted) >= -(-snapshot.files.num_rows // _LISTING_PAGE)
        on_disk: dict[str, int] = {}
        for directory in [root] if whole else [f"{root}/{p}" for p in sorted(wanted or ())]:
            selector = pafs.FileSelector(directory, recursive=True, allow_not_found=True)
            for info in filesystem.get_file_info(selector):
                relative = info.path[len(root) + 1 :]
                if (
                    info.type == pafs.FileType.File
                    and not any(is_hidden(part) for part in relative.split("/"))
                    and (wanted is None or relative.rpartition("/")[0] in wanted)
                ):
                    on_disk[relative] = (info.mtime_ns or 0) // 1_000_000
        logged = self.logged_relative_paths(snapshot, wanted)
        missing = sorted(logged - on_disk.keys())
        unlogged = on_disk.keys() - logged
        if not unlogged:
            return OrphanReport([], missing, [])
        later, last_commit_ms = settle()
        unlogged -= self.logged_relative_paths(later, wanted)
        orphans = {
            f for f in unlogged if last_commit_ms is not None and on_disk[f] < last_commit_ms
        }
        return OrphanReport(sorted(orphans), missing, sorted(unlogged - orphans))
