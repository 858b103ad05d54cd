"""Arrow arrays without pyarrow's conversions: a routine run never imports pandas."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

from airflow_provider_fscommit.core.formats.arrow_arrays import (
    booleans,
    numbers,
    numpy_array,
    string_array,
)
from fscommit_dev.aged_table import AgedTable


def test_arrays_hold_the_values_given():
    assert string_array(["dt=2026-11-20/hour=03", "", "région=été"]).to_pylist() == [
        "dt=2026-11-20/hour=03",
        "",
        "région=été",
    ]
    assert string_array([]).to_pylist() == []
    values = np.array([3, -1, 2**40], np.int64)
    assert numpy_array(values).to_pylist() == [3, -1, 2**40]
    z_values = numpy_array(np.array([2**64 - 1, 0], np.uint64))
    assert (z_values.type, z_values.to_pylist()) == (pa.uint64(), [2**64 - 1, 0])
    assert numpy_array(np.array([0.5, np.nan], np.float32)).type == pa.float32()
    sliced = pa.chunked_array([pa.array([5, 6, 7], pa.int32())]).slice(1)
    assert numbers(sliced).tolist() == [6, 7]
    assert numbers(pa.array([2**64 - 1], pa.uint64())).tolist() == [2**64 - 1]
    assert numbers(pa.array([-1.5, 2.0], pa.float64())).tolist() == [-1.5, 2.0]
    assert numbers(pa.array([], pa.int64())).tolist() == []
    flags = pa.array([True, False, None, True, True, False, False, True, True, False])
    assert booleans(flags.is_null()).tolist() == [False, False, True, *[False] * 7]
    assert booleans(flags.slice(7)).tolist() == [True, True, False]
    assert booleans(pa.array([], pa.bool_())).tolist() == []


RUN_WITH_WORK = """
import sys
from pathlib import Path
from fscommit_dev.aged_table import AgedTable
from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
spec = AgedTable(Path(sys.argv[1]), 3).spec()
summary = CompactionPublisher(spec).run(compact_units)
ready = [o.partition for o in summary.outcomes if not o.failed]
outcomes = PartitionCommitter(spec, create_policies(spec)).commit(ready)
print(sorted(o.partition for o in outcomes if o.state == "committed"))
print(sorted(name for name in sys.modules if name.split(".")[0] == "pandas"))
"""


def test_a_run_with_work_in_a_fresh_process_does_not_import_pandas(tmp_path):
    """The table state made (its checkpoint encoded), a new hour's files looked up in the
    sink log, compacted and committed: pandas (0.2-0.3 s, ~60 MB) is never imported."""
    aged = AgedTable(tmp_path, 3)
    aged.write()
    hour = aged.add_hour()
    ran = subprocess.run(
        [sys.executable, "-c", RUN_WITH_WORK, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[3],  # the checkout, where fscommit_dev is
    )
    assert ran.returncode == 0, ran.stderr
    committed, imported = ran.stdout.splitlines()
    assert committed == str([hour])
    assert imported == "[]"
    assert list((aged.table / "_fscommit" / "state").glob("*.checkpoint.arrow"))
