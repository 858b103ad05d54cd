from airflow_provider_fscommit.core.bin_packing import balance, pack


def test_packs_in_order_up_to_the_target():
    assert pack([3, 3, 3, 3, 3], lambda x: x, 7) == [[3, 3], [3, 3], [3]]


def test_an_item_larger_than_the_target_gets_its_own_bin():
    assert pack([1, 10, 1, 1], lambda x: x, 5) == [[1], [10], [1, 1]]


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
