import pytest

from airflow_provider_fscommit.core.compaction.bin_packing import LOOKBACK, balance, pack


# Flink's BinPackingTest.testBinPacking
@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (3, [[1, 2], [3], [4], [5]]),
        (5, [[1, 2], [3], [4], [5]]),
        (6, [[1, 2, 3], [4], [5]]),
        (8, [[1, 2, 3], [4], [5]]),
        (9, [[1, 2, 3], [4, 5]]),
        (10, [[1, 2, 3, 4], [5]]),
        (14, [[1, 2, 3, 4], [5]]),
        (15, [[1, 2, 3, 4, 5]]),
    ],
)
def test_flink_bin_packing_vectors(target, expected):
    assert pack([1, 2, 3, 4, 5], lambda x: x, target) == expected


def test_an_item_goes_into_the_first_open_bin_it_fits_in():
    assert pack([5, 5, 1, 1], lambda x: x, 6) == [[5, 1], [5, 1]]  # 2 files, not 3
    assert pack([3, 3, 3, 3, 3], lambda x: x, 7) == [[3, 3], [3, 3], [3]]


def test_an_item_larger_than_the_target_gets_its_own_bin():
    assert pack([1, 10, 1, 1], lambda x: x, 5) == [[1, 1, 1], [10]]


def test_only_the_last_ten_open_bins_take_items():
    # As Flink: opening an eleventh bin closes the oldest, which takes nothing more.
    items = [(f"f{i:02d}", 6) for i in range(LOOKBACK + 1)] + [("small", 4)]
    bins = pack(items, lambda f: f[1], 10)
    assert [[name for name, _ in b] for b in bins[:3]] == [["f00"], ["f01", "small"], ["f02"]]
    assert len(bins) == LOOKBACK + 1


def test_exact_fit_and_empty_input():
    assert pack([2, 3, 5], lambda x: x, 5) == [[2, 3], [5]]
    assert pack([], lambda x: x, 5) == []


def test_balance_spreads_units_over_few_tasks_of_similar_weight():
    weights = [9, 1, 1, 1, 5, 4, 3, 3, 2, 7]
    groups = balance(weights, lambda x: x, 3)
    assert len(groups) == 3
    assert [sum(g) for g in groups] == [12, 12, 12]  # 36 in three equal loads
    assert sorted(x for g in groups for x in g) == sorted(weights)  # each unit exactly once


def test_balance_never_makes_empty_groups():
    assert balance([5, 6], lambda x: x, 8) == [[6], [5]]
    assert balance([], lambda x: x, 8) == []
