from airflow_provider_fscommit.core.bin_packing import pack


def test_packs_in_order_up_to_the_target():
    assert pack([3, 3, 3, 3, 3], lambda x: x, 7) == [[3, 3], [3, 3], [3]]


def test_an_item_larger_than_the_target_gets_its_own_bin():
    assert pack([1, 10, 1, 1], lambda x: x, 5) == [[1], [10], [1, 1]]


def test_exact_fit_and_empty_input():
    assert pack([2, 3, 5], lambda x: x, 5) == [[2, 3], [5]]
    assert pack([], lambda x: x, 5) == []
