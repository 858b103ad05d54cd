"""The option table: every option described once, under a unique Flink key."""

from __future__ import annotations

from airflow_provider_fscommit.core.config import options


def test_every_option_has_a_description_and_flink_keys_are_unique():
    keys = [o.key for o in options.OPTIONS if o.key]
    assert len(keys) == len(set(keys))
    assert all(o.description for o in options.OPTIONS)
