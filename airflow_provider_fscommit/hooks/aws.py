"""``AwsStorageHook``: S3 settings from an Airflow AWS connection, as Airflow users expect.

Every operator, sensor and trigger that touches storage takes an ``aws_conn_id``. The
Amazon provider's ``AwsBaseHook`` resolves it exactly as Airflow's own S3 operators do
(keys, a profile, an assumed role, the connection's ``endpoint_url`` and ``region_name``),
and masks the secret and the session token in task logs. This hook puts the resolved
settings in effect for the core with
:func:`~airflow_provider_fscommit.core.storage.object_store.use_s3_settings`;
they never enter the table spec, XCom, a trigger's stored kwargs or the ledger.

``aws_conn_id=None`` (the default) uses the standard AWS chain of the process (its
environment, profile, instance role or web identity), and needs no Amazon provider: the
provider is imported only when a connection is named, so this module imports without it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from airflow_provider_fscommit.core.errors import import_extra
from airflow_provider_fscommit.core.storage.object_store import (
    S3Credentials,
    S3Settings,
    use_s3_settings,
)
from airflow_provider_fscommit.version_compat import BaseHook


class AwsStorageHook(BaseHook):
    """The S3 identity, endpoint and region the core's storage calls use.

    Uses the Amazon provider's ``aws`` connection type (it defines it). ``default_conn_name``
    is that provider's; the argument's default stays None, the standard chain, as every
    operator's ``aws_conn_id`` is.

    :param aws_conn_id: AWS connection for tables on S3 (None: the standard AWS chain).
    """

    conn_name_attr = "aws_conn_id"
    default_conn_name = "aws_default"
    conn_type = "aws"
    hook_name = "Amazon Web Services (partition commit storage)"

    def __init__(self, aws_conn_id: str | None = None) -> None:
        super().__init__()
        self.aws_conn_id = aws_conn_id

    def get_s3_settings(self) -> S3Settings | None:
        """The settings of the connection (None: the standard chain)."""
        if self.aws_conn_id is None:
            return None
        base_aws = import_extra(
            "airflow.providers.amazon.aws.hooks.base_aws",
            "s3",
            f"aws_conn_id={self.aws_conn_id!r} (an AWS connection for S3 tables)",
        )
        hook = base_aws.AwsBaseHook(aws_conn_id=self.aws_conn_id, client_type="s3")
        frozen = hook.get_credentials()  # masks the secret key and the token in task logs
        credentials = (
            S3Credentials(frozen.access_key, frozen.secret_key, frozen.token or None)
            if frozen is not None and frozen.access_key and frozen.secret_key
            else None
        )
        return S3Settings(
            endpoint_url=hook.conn_config.get_service_endpoint_url("s3"),
            region=hook.conn_config.region_name,
            credentials=credentials,
        )

    @contextlib.contextmanager
    def storage(self) -> Iterator[S3Settings | None]:
        """Run the enclosed core calls with the connection's S3 settings."""
        settings = self.get_s3_settings()
        with use_s3_settings(settings):
            yield settings


def s3_settings(aws_conn_id: str | None) -> S3Settings | None:
    """``AwsStorageHook(aws_conn_id).get_s3_settings()``, for callers holding only the id."""
    return AwsStorageHook(aws_conn_id).get_s3_settings()


def aws_storage(aws_conn_id: str | None) -> contextlib.AbstractContextManager[S3Settings | None]:
    """``AwsStorageHook(aws_conn_id).storage()``, for callers holding only the id."""
    return AwsStorageHook(aws_conn_id).storage()
