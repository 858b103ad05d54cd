"""The ``http-report`` policy: POST each committed partition to an HTTP endpoint.

Paimon's ``http-report`` mark-done action, for consumers that are neither Hive nor
Airflow (a data catalog, a quality service, a webhook of another scheduler). One JSON
document per partition (:func:`report_document`) holding Paimon's four fields as Paimon
writes them, so a receiver written for Paimon works unchanged, beside the richer facts
of the commit. Paimon's answer rule too: the report succeeded only when the answer is
2xx and JSON whose ``result`` is ``SUCCESS`` (any case). Anything else (another
status, a redirect, an empty or non-JSON body, another result) and a timeout fail the
policy. The partition is then not recorded as committed, so the next run reports it
again; the policies before it ran and are idempotent, nothing is lost.
A receiver may see a partition twice (a run that failed on a later partition, or a later
policy failing): ``compaction_seq`` tells a repeat from late data committed again.

The target comes from the table spec (Paimon's ``partition.mark-done-action.http.*``
keys) or, in DAGs, from an Airflow HTTP connection that the hook layer turns into an
:class:`HttpTarget`; its headers (tokens) are sent, never written to a message.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.compat import strict_zip
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.quantities import iso_ms
from airflow_provider_fscommit.core.errors import ConfigError, HttpReportError
from airflow_provider_fscommit.core.publish.published import CommitContext

_ANSWER_SHOWN = 200  # characters of a failing answer's body kept in the message
_ANSWER_READ = 1 << 16  # bytes of an answer read: Paimon's answer is a small JSON object


@dataclass(frozen=True)
class HttpTarget:
    """Where and how to POST: the URL, extra headers, the timeout and Paimon's params text."""

    url: str
    timeout: timedelta
    params: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"http-report: {shown_url(self.url)!r} is not an http:// or https:// URL; set "
                "partition.mark-done-action.http.url (or the HTTP connection's host) to one"
            )
        if self.timeout <= timedelta(0):
            raise ConfigError(
                "http-report: the timeout must be positive, e.g. "
                "partition.mark-done-action.http.timeout: '5 s'"
            )

    @property
    def shown(self) -> str:
        return shown_url(self.url)


def shown_url(url: str) -> str:
    """The URL for a message: no user, password, query or fragment (they may hold tokens)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer other than 2xx: urllib would re-send the POST as a GET."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_RefuseRedirects())


class HttpReportCommitPolicy(PartitionCommitPolicy):
    kind = PolicyKind.HTTP_REPORT

    def __init__(self, target: HttpTarget) -> None:
        self.target = target

    def commit(self, context: CommitContext) -> None:
        body = json.dumps(report_document(context, self.target.params)).encode()
        request = urllib.request.Request(
            self.target.url,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", **self.target.headers},
        )
        failed = f"http-report of {context.path} to {self.target.shown} failed"
        retry = (
            "the partition is not recorded as committed and the next run reports it again; "
            "fix the endpoint or partition.mark-done-action.http.* and rerun"
        )
        try:
            with _OPENER.open(request, timeout=self.target.timeout.total_seconds()) as answer:
                status, text = answer.status, answer.read(_ANSWER_READ).decode(errors="replace")
        except urllib.error.HTTPError as exc:
            text = exc.read(_ANSWER_SHOWN).decode(errors="replace").strip()
            raise HttpReportError(
                f"{failed}: HTTP {exc.code} {exc.reason}{f' ({text})' if text else ''}; {retry}"
            ) from None
        except OSError as exc:  # URLError too: refused, unresolved, timed out
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            if isinstance(reason, TimeoutError):
                reason = (
                    f"no answer within {self.target.timeout.total_seconds():g} s "
                    "(partition.mark-done-action.http.timeout)"
                )
            raise HttpReportError(f"{failed}: {reason}; {retry}") from None
        refusal = answer_refusal(text)
        if refusal:
            raise HttpReportError(
                f"{failed}: HTTP {status} but {refusal}; a report succeeds only when the "
                'answer is JSON with "result": "SUCCESS" (Paimon\'s rule), so make the '
                f"endpoint answer that once it has taken the partition; {retry}"
            )


def answer_refusal(text: str) -> str | None:
    """Why a 2xx answer's body is not Paimon's success, or None when it is."""
    shown = text.strip()[:_ANSWER_SHOWN]
    if not text.strip():
        return "the answer was empty"
    try:
        answer = json.loads(text)
    except json.JSONDecodeError:
        return f"the answer is not JSON ({shown!r})"
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, str) or result.upper() != "SUCCESS":
        return f'its "result" is {json.dumps(result)} ({shown})'
    return None


def report_document(context: CommitContext, params: str | None) -> dict[str, Any]:
    """What a receiver learns of a committed partition (times in ms and ISO-8601 UTC).

    ``params``, ``table``, ``path`` and ``partition`` are Paimon's fields, as its
    ``HttpReportMarkDoneAction`` sends them: the option's text as written, the
    ``database.table`` name, the table's location and the partition's path.
    """
    spec, summary = context.spec, context.summary
    origin = context.origin or {}
    return {
        "params": params,
        "table": f"{spec.metastore_database}.{spec.metastore_table}"
        if spec.metastore_table
        else None,
        "path": spec.table_path,
        "partition": context.path,
        "table_path": spec.table_path,
        "values": dict(strict_zip(context.partition.keys, context.values)),
        "location": context.location,
        "rows": summary.rows,
        "files": summary.files,
        "bytes": summary.bytes,
        "watermark_ms": summary.watermark_ms,
        "watermark": iso_ms(summary.watermark_ms),
        "committed_at_ms": summary.committed_at_ms,
        "committed_at": iso_ms(summary.committed_at_ms),
        "compaction_seq": summary.compaction_seq,
        "run_id": origin.get("run_id"),
        "dag_id": origin.get("dag_id"),
        "params_object": _json_object(params),
    }


def _json_object(params: str | None) -> dict[str, Any] | None:
    """``params`` parsed, when its text is a JSON object (what the document's ``params``
    held before it followed Paimon); None otherwise."""
    try:
        parsed = json.loads(params) if params else None
    except json.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None
