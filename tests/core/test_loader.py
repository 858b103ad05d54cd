"""Loading a user's class by dotted path, and the messages when the path is wrong."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.loader import load_class
from airflow_provider_fscommit.core.publish.published import CommitContext

OPTION = "sink.partition-commit.policy.class"


class Notify(PartitionCommitPolicy):
    """A user's custom policy, as a DAG's package would define it."""

    def commit(self, context: CommitContext) -> None:
        pass


class NotAPolicy:
    pass


def test_a_custom_class_named_by_its_dotted_path_loads():
    assert load_class(f"{__name__}.Notify", PartitionCommitPolicy, OPTION) is Notify


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("Notify", r"'Notify' is not a dotted path; write 'package.module.ClassName'"),
        ("my_team.policies.Notify", r"cannot import module 'my_team.policies'.*fix the path"),
        (
            f"{__name__}.NotAPolicy",
            r"NotAPolicy' is not a subclass of .*core\.commit\.policy\.PartitionCommitPolicy",
        ),
        (f"{__name__}.Missing", r"Missing' is not a subclass of"),
        (f"{__name__}.OPTION", r"OPTION' is not a subclass of"),
    ],
    ids=["not-dotted", "no-module", "wrong-base", "no-such-name", "not-a-class"],
)
def test_a_wrong_path_fails_naming_the_option_and_the_path(path, message):
    with pytest.raises(ConfigError, match=rf"^{OPTION}: .*{message}") as error:
        load_class(path, PartitionCommitPolicy, OPTION)
    assert path.rpartition(".")[0] in str(error.value)
