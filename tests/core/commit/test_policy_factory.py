"""The policy factory: the chain a spec names, refused when it cannot commit anything or
when a policy's extra is not installed."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.core.commit.policy_factory import catalog_policies, create_policies
from airflow_provider_fscommit.core.errors import ConfigError, MissingExtraError
from fscommit_dev.metastore.client import metastore_table_spec
from tests.support.extras import without_extra


def test_no_policy_or_no_metastore_connection_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"policy\.kind is empty"):
        create_policies(metastore_table_spec(tmp_path / "t", "x"))
    spec = metastore_table_spec(
        tmp_path / "t", "x", **{"sink.partition-commit.policy.kind": "metastore"}
    )
    with pytest.raises(ConfigError, match="needs a metastore connection"):
        create_policies(spec)


@pytest.mark.parametrize(
    ("kinds", "extra"),
    [
        ("metastore,success-file", "hive"),
        ("success-file,mark-event", "hive"),
        ("glue", "glue"),
        ("iceberg", "iceberg"),
    ],
)
def test_a_policy_without_its_extra_names_the_extra_before_anything_else(
    kinds, extra, monkeypatch, tmp_path
):
    """Building the chain (to commit, or to expire) checks each catalog's extra first: one
    message naming it, before the chain asks for a connection or a client."""
    without_extra(monkeypatch, extra)
    spec = metastore_table_spec(tmp_path / "t", "x", **{"sink.partition-commit.policy.kind": kinds})
    policy = next(kind for kind in kinds.split(",") if kind != "success-file")
    for build in (create_policies, lambda s: catalog_policies(s, None, None)):
        with pytest.raises(MissingExtraError) as refused:
            build(spec)
        assert str(refused.value).startswith(f"the {policy} policy needs the '{extra}' extra")
        assert str(refused.value).endswith(f"pip install 'airflow-provider-fscommit[{extra}]'")
        assert isinstance(refused.value, ConfigError)  # the CLI's one line, exit status 1
