"""S3 credentials from an Airflow AWS connection (``aws_conn_id``), as Airflow users expect.

Every operator, sensor and trigger that touches storage takes an ``aws_conn_id``. The
Amazon provider's ``AwsBaseHook`` resolves it exactly as Airflow's own S3 operators do
(keys, a profile, an assumed role, the connection's ``endpoint_url`` and ``region_name``),
and masks the secret and the session token in task logs. The resolved settings are put in
effect for the core with
:func:`~airflow_provider_fscommit.core.storage.object_store.use_s3_settings`;
they never enter the table spec, XCom, a trigger's stored kwargs or the ledger.

``aws_conn_id=None`` (the default) uses the standard AWS chain of the process (its
environment, profile, instance role or web identity), and needs no Amazon provider.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.storage.object_store import (
    S3Credentials,
    S3Settings,
    use_s3_settings,
)


def s3_settings(aws_conn_id: str | None) -> S3Settings | None:
    """The settings of connection ``aws_conn_id`` (None: the standard chain)."""
    if aws_conn_id is None:
        return None
    try:
        from airflow.providers.amazon.aws.hooks.base_aws import AwsBaseHook
    except ImportError:
        raise FsCommitError(
            f"aws_conn_id={aws_conn_id!r} needs the Amazon provider: install "
            "airflow-provider-fscommit[s3]"
        ) from None
    hook = AwsBaseHook(aws_conn_id=aws_conn_id, client_type="s3")
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
def aws_storage(aws_conn_id: str | None) -> Iterator[S3Settings | None]:
    """Run the enclosed core calls with the connection's S3 settings."""
    settings = s3_settings(aws_conn_id)
    with use_s3_settings(settings):
        yield settings
