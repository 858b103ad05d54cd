"""Plans are deterministic, skip what is published, and name outputs like Spark does."""

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
