"""A partition is fragmented when the compactions whose files it holds left it more files
than one compaction makes (plus one), or unsorted across them in a sorted table; one
compaction's files never are, so a rewrite is never rewritten until new data lands."""

from airflow_provider_fscommit.core.compaction.fragmentation import Fragmentation

MB = 1024 * 1024


def test_files_beyond_one_compaction_plus_one_are_fragmented_only_from_two_compactions():
    assert Fragmentation(3, 300 * MB, 3, 128 * MB).one_compaction == 3
    assert not Fragmentation(4, 300 * MB, 4, 128 * MB).fragmented(sorted_table=False)
    assert Fragmentation(5, 300 * MB, 5, 128 * MB).fragmented(sorted_table=False)
    # One compaction's files (a rewrite's, or first-fit's near-half files) are never.
    assert not Fragmentation(9, 300 * MB, 1, 128 * MB).fragmented(sorted_table=True)


def test_in_a_sorted_table_a_second_compaction_is_fragmentation():
    two = Fragmentation(1, 10 * MB, 1, 128 * MB).with_plan(1, 1)
    assert (two.files, two.compactions, two.one_compaction) == (2, 2, 1)
    assert two.fragmented(sorted_table=True) and not two.fragmented(sorted_table=False)
    assert Fragmentation(0, 0, 0, 128 * MB).one_compaction == 1
