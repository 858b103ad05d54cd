"""Plans are deterministic, skip what is published, and name outputs like Spark does."""

from airflow_provider_fscommit.core.compaction.plan import CompactionPlan
from airflow_provider_fscommit.core.compaction.planner import plan_rewrite
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.spark.staging import StagedFile
from tests.support.plans import FILES, plan


def test_inputs_are_sorted_by_path_and_bin_packed():
    result = plan(FILES)
    assert [[f.uri[-14:] for f in u.inputs] for u in result.units] == [
        ["part-a.parquet", "part-b.parquet"],
        ["part-c.parquet", "part-d.parquet"],
        ["part-e.parquet"],
    ]
    assert [u.output for u in result.units] == [
        f"part-00003-0000{i}-{result.plan_id}.c000.snappy.parquet" for i in range(3)
    ]
    again = plan(list(reversed(FILES)))
    assert [u.inputs for u in again.units] == [u.inputs for u in result.units]


def test_published_inputs_are_left_out_and_nothing_left_means_no_plan():
    result = plan(FILES, published={FILES[0].uri, FILES[1].uri})
    assert {f.uri for f in result.inputs} == {f.uri for f in FILES[2:]}
    assert plan(FILES, published={f.uri for f in FILES}) is None


def test_without_auto_compaction_every_file_is_published_as_it_is():
    result = plan(FILES, auto_compaction=False, codec="zstd")
    assert [len(u.inputs) for u in result.units] == [1] * 5
    assert result.units[0].output.endswith(".c000.zstd.parquet")


def test_a_rewrite_takes_the_published_files_and_the_new_staged_ones_into_its_own_directory():
    published = [StagedFile(f"file:///t/dt=1/part-{n}.parquet", 70) for n in "xy"]
    result = plan_rewrite(
        "dt=1",
        published,
        FILES,
        {f.uri for f in FILES[:3]},  # three staged files published already
        seq=7,
        target_file_size=100,
        codec="snappy",
        sink_latest_batch=9,
        watermark_ms=1000,
        created_ms=5,
        file_format=FileFormat.PARQUET,
    )
    assert result.directory == "rewrite-00007"
    assert result.replaces == tuple(f.uri for f in published)
    assert [f.uri for f in result.staged_inputs] == [FILES[3].uri, FILES[4].uri]  # by path
    # 220 bytes at 100 a file: three outputs; an input goes to the one its bytes start in
    assert [[f.size for f in u.inputs] for u in result.units] == [[70, 70], [40], [40]]
    assert [u.output for u in result.units] == [
        f"part-00007-0000{i}-{result.plan_id}.c000.snappy.parquet" for i in range(3)
    ]
    again = CompactionPlan.from_dict(result.to_dict())
    assert (again.directory, again.replaces) == (result.directory, result.replaces)
    assert CompactionPlan.from_dict(plan(FILES).to_dict()).directory == ""
