"""S3 and S3-compatible stores (MinIO, Ceph, R2, OSS…): settings, clients and their errors.

Data, listings and ordinary writes go through pyarrow's ``S3FileSystem``; the few writes
that must be conditional (the table lock and the ledger's create-once records, see
:mod:`conditional_writes`) go through boto3, because pyarrow does not expose
``If-None-Match`` / ``If-Match``. Both clients are built here from one :class:`S3Settings`,
so they always reach the same endpoint with the same identity.

Where the settings come from:

- by default, the standard AWS chain that pyarrow and boto3 both read (environment
  variables, ``AWS_PROFILE`` and the config files, web identity / IRSA, instance roles),
  with ``AWS_ENDPOINT_URL`` for an S3-compatible store;
- explicit settings in effect through :func:`use_s3_settings`: the Airflow operators,
  sensor and trigger install the ones of their ``aws_conn_id`` connection that way.

Why a context variable and not a module global: the triggerer runs many triggers in one
process, each in an asyncio task with a context of its own (copied into the threads they
poll in), so two triggers with different connections never see each other's settings.

Credentials never leave memory: they are not part of a table spec, a plan, a ledger
record or a command line, and :class:`S3Credentials` does not print its secrets.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import wraps
from typing import Any, TypeVar, cast

import pyarrow.fs as pafs

from airflow_provider_fscommit.core.compat import S3_DELAYED_OPEN
from airflow_provider_fscommit.core.errors import StoreError, import_extra

# Transient failures (503 SlowDown, resets, timeouts) are retried with exponential
# backoff, well inside the table lock's lease (120 s, renewed every 40 s).
_MAX_ATTEMPTS = 6
_CONNECT_TIMEOUT_S = 5.0
_REQUEST_TIMEOUT_S = 20.0
_DEFAULT_REGION = "us-east-1"


@dataclass(frozen=True)
class S3Credentials:
    """A static (or temporary, with a session token) AWS identity; secrets never printed."""

    access_key: str
    secret_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class S3Settings:
    """How to reach S3: endpoint (None: AWS), region, and credentials (None: the chain)."""

    endpoint_url: str | None = None
    region: str | None = None
    credentials: S3Credentials | None = None

    @classmethod
    def from_environment(cls) -> S3Settings:
        """The standard AWS environment variables (the chain's first link).

        Static keys found there are taken as they are, so that the Spark job can hand the
        same identity to its executors (:func:`task_settings`).
        """
        access_key = os.environ.get("AWS_ACCESS_KEY_ID")
        secret_key = os.environ.get("AWS_SECRET_ACCESS_KEY")
        credentials = (
            S3Credentials(access_key, secret_key, os.environ.get("AWS_SESSION_TOKEN") or None)
            if access_key and secret_key
            else None
        )
        return cls(
            endpoint_url=os.environ.get("AWS_ENDPOINT_URL_S3")
            or os.environ.get("AWS_ENDPOINT_URL")
            or None,
            region=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None,
            credentials=credentials,
        )

    def describe(self) -> str:
        """Where requests go and as whom, for messages (never a secret)."""
        where = f"endpoint {self.endpoint_url}" if self.endpoint_url else "AWS S3"
        who = (
            f"access key {self.credentials.access_key}"
            if self.credentials
            else "the standard AWS credential chain"
        )
        return f"{where}, {who}"


_EXPLICIT: contextvars.ContextVar[S3Settings | None] = contextvars.ContextVar(
    "fscommit_s3_settings", default=None
)


@contextlib.contextmanager
def use_s3_settings(settings: S3Settings | None) -> Iterator[None]:
    """Use ``settings`` for every S3 access in this context (None: the standard chain)."""
    token = _EXPLICIT.set(settings)
    try:
        yield
    finally:
        _EXPLICIT.reset(token)


def current_settings() -> S3Settings:
    """The settings in effect: explicit ones, else those of the environment."""
    return _EXPLICIT.get() or S3Settings.from_environment()


def task_settings() -> S3Settings | None:
    """What the Spark job hands its tasks: the driver's identity when it is explicit.

    Executors on other hosts do not inherit the driver's environment; static credentials
    (from a connection, or the driver's environment) travel inside the task, in memory,
    as Spark ships any task. Otherwise (instance roles, IRSA) each executor uses its own
    chain, which refreshes temporary credentials by itself.
    """
    settings = current_settings()
    return settings if settings.credentials or settings.endpoint_url else None


def is_s3(*uris: str) -> bool:
    """Whether any of ``uris`` is on S3 (``s3://``, ``s3a://``, ``s3n://``)."""
    return any(uri.split("://", 1)[0].lower() in ("s3", "s3a", "s3n") for uri in uris)


_filesystems: dict[tuple[S3Settings, str], pafs.S3FileSystem] = {}
_clients: dict[S3Settings, Any] = {}  # boto3 clients are thread-safe
_regions: dict[str, str] = {}
_cache_lock = threading.Lock()


def s3_filesystem(bucket: str) -> pafs.S3FileSystem:
    """The pyarrow filesystem for ``bucket`` under the current settings (one per process).

    Built once per settings and bucket: ``FileSystem.from_uri`` would look the bucket's
    region up again for every file, and a compaction opens thousands.
    """
    settings = current_settings()
    key = (settings, bucket)
    with _cache_lock:
        cached = _filesystems.get(key)
    if cached is not None:
        return cached
    if settings.credentials is None:
        _require_chain_credentials(bucket)
    options: dict[str, Any] = {
        "region": settings.region or _region_of(bucket, settings),
        "connect_timeout": _CONNECT_TIMEOUT_S,
        "request_timeout": _REQUEST_TIMEOUT_S,
        "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=_MAX_ATTEMPTS),
    }
    if S3_DELAYED_OPEN:
        options["allow_delayed_open"] = True
    if settings.endpoint_url:
        options["endpoint_override"] = settings.endpoint_url
        if settings.endpoint_url.startswith("http://"):
            options["scheme"] = "http"
    if settings.credentials is not None:
        options["access_key"] = settings.credentials.access_key
        options["secret_key"] = settings.credentials.secret_key
        options["session_token"] = settings.credentials.session_token
    filesystem = pafs.S3FileSystem(**options)
    _require_bucket(filesystem, bucket, settings)
    with _cache_lock:
        return _filesystems.setdefault(key, filesystem)


def s3_client() -> Any:
    """The boto3 S3 client of the current settings (standard retries, bounded timeouts).

    One per settings and process, like the filesystems: building one costs tens of
    milliseconds, and the lock, the ledger and error diagnosis each want one.
    """
    settings = current_settings()
    with _cache_lock:
        cached = _clients.get(settings)
    if cached is not None:
        return cached
    client = _new_client(settings)
    with _cache_lock:
        return _clients.setdefault(settings, client)


def _new_client(settings: S3Settings) -> Any:
    boto3 = _boto3()
    from botocore.config import Config

    credentials = settings.credentials
    return boto3.session.Session().client(
        "s3",
        endpoint_url=settings.endpoint_url,
        region_name=settings.region or _DEFAULT_REGION,
        aws_access_key_id=credentials.access_key if credentials else None,
        aws_secret_access_key=credentials.secret_key if credentials else None,
        aws_session_token=credentials.session_token if credentials else None,
        config=Config(
            retries={"mode": "standard", "max_attempts": _MAX_ATTEMPTS},
            connect_timeout=_CONNECT_TIMEOUT_S,
            read_timeout=_REQUEST_TIMEOUT_S,
        ),
    )


def _boto3() -> Any:
    """boto3, the ``s3`` extra's; without it, the one error that names the extra."""
    return import_extra("boto3", "s3", "an S3 location (the lock's and the ledger's writes)")


def _require_chain_credentials(bucket: str) -> None:
    """Refuse to go on without credentials: pyarrow would send unsigned requests."""
    if _boto3().session.Session().get_credentials() is None:
        raise StoreError(
            f"no AWS credentials found for s3://{bucket}: set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY or AWS_PROFILE, run where an instance role or web "
            "identity applies, or give the Airflow task an aws_conn_id"
        )


def _require_bucket(filesystem: pafs.S3FileSystem, bucket: str, settings: S3Settings) -> None:
    """Name a missing bucket at once: S3 reads of it otherwise just find nothing."""
    try:
        missing = filesystem.get_file_info(bucket).type == pafs.FileType.NotFound
    except OSError as exc:  # e.g. no permission to look at the bucket: later calls will say
        explained = explain(exc, f"s3://{bucket}")
        if explained is not None and "denied" not in str(explained):
            raise explained from None
        return
    if missing:
        raise _no_bucket(f"s3://{bucket}", settings)


def _no_bucket(where: str, settings: S3Settings) -> StoreError:
    bucket = where.removeprefix("s3://").partition("/")[0]
    return StoreError(
        f"bucket s3://{bucket} does not exist ({settings.describe()}): create it, or fix the "
        "path (and the endpoint, for an S3-compatible store)"
    )


def _region_of(bucket: str, settings: S3Settings) -> str:
    if settings.endpoint_url:
        return _DEFAULT_REGION  # S3-compatible stores answer in any region
    with _cache_lock:
        known = _regions.get(bucket)
    if known is None:
        try:
            known = pafs.resolve_s3_region(bucket)
        except OSError as exc:
            raise explain(exc, f"s3://{bucket}") or exc from None
        with _cache_lock:
            _regions[bucket] = known
    return known


# pyarrow: "AWS Error ACCESS_DENIED during HeadObject operation: ..."; boto3: error codes.
_PYARROW_CODE = re.compile(r"AWS Error ([A-Z_]+) during (\w+)")
_PYARROW_KEY = re.compile(r"key '([^']*)' in bucket '([^']*)'|bucket '([^']*)'")
_DENIED = {"ACCESS_DENIED", "AccessDenied", "AllAccessDisabled"}
_BAD_CREDENTIALS = {
    "INVALID_ACCESS_KEY_ID",
    "InvalidAccessKeyId",
    "SIGNATURE_DOES_NOT_MATCH",
    "SignatureDoesNotMatch",
    "InvalidClientTokenId",
    "EXPIRED_TOKEN",
    "ExpiredToken",
    "InvalidToken",
}
_NO_BUCKET = {"NO_SUCH_BUCKET", "NoSuchBucket"}
_UNREACHABLE = {"NETWORK_CONNECTION", "REQUEST_TIMEOUT", "EndpointConnectionError"}


def explain(exc: BaseException, location: str | None = None) -> StoreError | None:
    """The one clear message of a store failure a user can fix, or None for other errors."""
    code, operation, where = _error_facts(exc)
    if code is None:
        return None
    if code in _DENIED and operation in ("HeadObject", "HeadBucket") and where:
        code = _diagnose(where) or code
    where = where or location or "the store"
    settings = current_settings()
    if code in _BAD_CREDENTIALS:
        return StoreError(
            f"the store rejects the credentials used for {where} ({code} during {operation}; "
            f"{settings.describe()}): fix the access key and secret (AWS_* variables, the "
            "profile, or the aws_conn_id connection)"
        )
    if code in _DENIED:
        return StoreError(
            f"access to {where} is denied ({code} during {operation}; {settings.describe()}): "
            "grant this identity s3:ListBucket, s3:GetObject, s3:PutObject and "
            "s3:DeleteObject on that prefix, or use credentials that have them"
        )
    if code in _NO_BUCKET:
        return _no_bucket(where, settings)
    if code in _UNREACHABLE:
        return StoreError(
            f"cannot reach the store for {where} ({code} during {operation}; "
            f"{settings.describe()}): check the endpoint URL (AWS_ENDPOINT_URL or the "
            "connection's endpoint_url) and the network, then rerun"
        )
    return None


def _diagnose(where: str) -> str | None:
    """The error code S3 leaves out of a HEAD answer (a bare 403), asked again with a GET.

    A HEAD cannot tell a wrong key from a missing permission; one more request, made only
    when something already failed, names which it is.
    """
    from botocore.exceptions import BotoCoreError, ClientError

    bucket, _, key = where.removeprefix("s3://").partition("/")
    try:
        s3_client().get_object(Bucket=bucket, Key=key or ".", Range="bytes=0-0")
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code")
        return None if code == "NoSuchKey" else code
    except BotoCoreError:
        return None
    return None


def _error_facts(exc: BaseException) -> tuple[str | None, str | None, str | None]:
    """(error code, operation, s3:// location) of a pyarrow or botocore error."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):  # botocore.exceptions.ClientError
        error = response.get("Error", {})
        return error.get("Code"), getattr(exc, "operation_name", None), None
    if type(exc).__name__ in ("EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError"):
        return "EndpointConnectionError", "a request", None
    if not isinstance(exc, OSError):
        return None, None, None
    text = str(exc)
    match = _PYARROW_CODE.search(text)
    if match is None:
        return None, None, None
    place = _PYARROW_KEY.search(text)
    where = None
    if place is not None:
        key, bucket = place.group(1), place.group(2) or place.group(3)
        where = f"s3://{bucket}/{key}" if key is not None else f"s3://{bucket}"
    return match.group(1), match.group(2), where


# A decorator that keeps the signature (typing.ParamSpec is Python 3.10's; the job's
# modules also run on the cluster's Python 3.9).
F = TypeVar("F", bound=Callable[..., Any])


def store_errors(function: F) -> F:
    """Turn store failures inside ``function`` into their one clear message.

    Used on the core's entry points (status, wait, compaction, commit, clean-up), so a
    wrong key, a missing bucket or an unreachable endpoint reads the same everywhere.
    """

    @wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except OSError as exc:
            explained = explain(exc)
            if explained is None:
                raise
            raise explained from exc

    return cast(F, wrapper)
