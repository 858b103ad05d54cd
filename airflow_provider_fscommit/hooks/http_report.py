"""``HttpReportHook``: the ``http-report`` target of an Airflow HTTP connection.

As the HTTP provider's ``HttpHook`` reads a connection: the host (with its scheme, or
``schema`` and ``port`` beside it) is the base URL, the extra's string values are request
headers, login and password are basic auth. The spec's
``partition.mark-done-action.http.url``, when set, is the path on that base. Every header
value and the password are registered with Airflow's secrets masker before anything can
log them; the policy's messages name the URL without its query, never a header. The core's
policy makes the requests (with the spec's timeout and params), so the HTTP provider's
session is not needed: this hook gives it where and with what to post.
"""

from __future__ import annotations

import base64
import dataclasses
import warnings
from urllib.parse import urljoin

from airflow.exceptions import AirflowProviderDeprecationWarning

from airflow_provider_fscommit.core.commit.http_report_policy import HttpTarget
from airflow_provider_fscommit.core.commit.policy_factory import spec_http_target
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.version_compat import BaseHook, mask_secret


class HttpReportHook(BaseHook):
    """Where ``http-report`` posts: the connection's URL, headers and basic auth.

    Uses the HTTP provider's ``http`` connection type (it defines it).

    :param http_conn_id: HTTP connection the ``http-report`` policy posts to.
    """

    conn_name_attr = "http_conn_id"
    default_conn_name = "http_default"
    conn_type = "http"
    hook_name = "HTTP (partition commit report)"

    def __init__(self, http_conn_id: str = default_conn_name) -> None:
        super().__init__()
        self.http_conn_id = http_conn_id

    def get_target(self, spec: TableSpec) -> HttpTarget:
        """Where ``http-report`` posts for ``spec``, with the connection's URL, headers and auth."""
        connection = self.get_connection(self.http_conn_id)
        host = (connection.host or "").rstrip("/")
        if not host:
            raise ConfigError(
                f"the HTTP connection {self.http_conn_id!r} has no host; set it to the report "
                "endpoint's base URL, e.g. https://catalog.example.com"
            )
        if "://" not in host:
            port = f":{connection.port}" if connection.port else ""
            host = f"{connection.schema or 'http'}://{host}{port}"
        path = spec.http_report_url
        if path and "://" in path:
            raise ConfigError(
                f"partition.mark-done-action.http.url is a full URL, but the HTTP connection "
                f"{self.http_conn_id!r} gives the base URL too; set the option to the path only "
                "(e.g. /partitions/done), or drop http_conn_id"
            )
        headers = {k: v for k, v in connection.extra_dejson.items() if isinstance(v, str)}
        if connection.login:
            token = f"{connection.login}:{connection.password or ''}".encode()
            headers["Authorization"] = f"Basic {base64.b64encode(token).decode()}"
        for value in [*headers.values(), connection.password]:
            if value:
                mask_secret(value)
        url = urljoin(f"{host}/", path.lstrip("/")) if path else host
        return dataclasses.replace(spec_http_target(spec, url), headers=headers)


def connection_http_target(spec: TableSpec, http_conn_id: str) -> HttpTarget:
    """Deprecated: ``HttpReportHook(http_conn_id).get_target(spec)``."""
    warnings.warn(
        "connection_http_target is deprecated; use "
        "HttpReportHook(http_conn_id).get_target(spec) of this module",
        AirflowProviderDeprecationWarning,
        stacklevel=2,
    )
    return HttpReportHook(http_conn_id).get_target(spec)
