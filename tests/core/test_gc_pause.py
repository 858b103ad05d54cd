"""The cycle collector paused while a step makes an object per partition, and restored
as the process had it, whichever thread ends last."""

from __future__ import annotations

import gc
import threading

import pytest

from airflow_provider_fscommit.core.gc_pause import gc_paused


@pytest.fixture(autouse=True)
def collector_enabled():
    gc.enable()
    yield
    gc.enable()


def test_the_collector_is_paused_in_the_block_and_runs_again_after_it_even_on_error():
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # a paused step calling another
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("a store failed mid-decode")
    assert gc.isenabled()


def test_overlapping_blocks_in_threads_restore_it_when_the_last_one_ends():
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with gc_paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with gc_paused():
            second_in.set()
            first_out.wait(5)
            seen.append(gc.isenabled())  # the first ended: still paused for this one
        seen.append(gc.isenabled())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == [False, True]


def test_a_process_that_disabled_the_collector_keeps_it_disabled():
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
