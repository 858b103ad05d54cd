"""The commit-status page: a small FastAPI app the Airflow api-server mounts.

Which tables it shows is an Airflow setting, ``[fscommit] table_specs``: comma-separated
table spec files (the YAML/JSON files the DAGs and ``fscommit --spec`` read) or glob
patterns; ``[fscommit] aws_conn_id`` names the AWS connection to read tables on S3 with
(unset: the api-server's own AWS identity). Each request reads every table afresh
(checkpoint, sink log, ledger); a table that cannot be read shows its error on its own
card, the others still show.

Only users the auth manager lets see the Airflow website may see it: the app checks the
same credentials as Airflow's REST API (``Authorization: Bearer`` or the UI's ``_token``
cookie). A browser without them is sent to the auth manager's login page and back.
"""

from __future__ import annotations

import glob
import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.resource_details import AccessView
from airflow.api_fastapi.core_api.security import requires_access_view
from airflow.configuration import conf
from fastapi import Depends, FastAPI, HTTPException, Request, status
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from airflow_provider_fscommit.core.config.quantities import format_duration, parse_duration
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.status.completeness import read_completeness
from airflow_provider_fscommit.core.status.table_report import (
    DEFAULT_STALL_TIMEOUT,
    read_table_report,
)
from airflow_provider_fscommit.hooks.aws import AwsStorageHook
from airflow_provider_fscommit.plugins.render import TableCard, render_page

log = logging.getLogger(__name__)

SECTION = "fscommit"
URL_PREFIX = "/fscommit"
CONFIG_HINT = (
    "Set [fscommit] table_specs (environment AIRFLOW__FSCOMMIT__TABLE_SPECS) to the table "
    "spec files, comma-separated; globs allowed."
)


@dataclass(frozen=True)
class PageSettings:
    """The ``[fscommit]`` settings of the page, read per request (no restart to change)."""

    table_specs: list[str]
    stall_timeout: timedelta
    aws_conn_id: str | None = None

    @classmethod
    def from_airflow_config(cls) -> PageSettings:
        raw = conf.get(SECTION, "table_specs", fallback="") or ""
        timeout = conf.get(
            SECTION, "stall_timeout", fallback=format_duration(DEFAULT_STALL_TIMEOUT)
        )
        return cls(
            table_specs=[entry.strip() for entry in raw.split(",") if entry.strip()],
            stall_timeout=parse_duration(timeout, "[fscommit] stall_timeout"),
            aws_conn_id=conf.get(SECTION, "aws_conn_id", fallback="") or None,
        )


def spec_files(patterns: list[str]) -> list[str]:
    """The spec files the patterns name, in order; a pattern matching nothing is kept
    as it is, so its card says the file is missing rather than silently vanishing."""
    files: list[str] = []
    for pattern in patterns:
        matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else []
        for path in matches or [pattern]:
            if path not in files:
                files.append(path)
    return files


def read_cards(settings: PageSettings, now_ms: int) -> list[TableCard]:
    """One card per spec file: its report, or the error that stopped reading it."""
    cards = []
    for path in spec_files(settings.table_specs):
        name = Path(path).stem
        try:
            spec = TableSpec.from_file(path)
            with AwsStorageHook(settings.aws_conn_id).storage():
                report = read_table_report(spec, settings.stall_timeout, now_ms=now_ms, shared=True)
                completeness = read_completeness(report)
        except FsCommitError as exc:
            cards.append(TableCard(name, path, error=str(exc)))
        except Exception as exc:
            # Storage clients raise all kinds of errors (permissions, network); one table's
            # trouble must not take the page of every other table down with it.
            log.exception("fscommit status page: cannot read the table of %s", path)
            cards.append(TableCard(name, path, error=f"{type(exc).__name__}: {exc}"))
        else:
            cards.append(TableCard(name, path, report=report, completeness=completeness))
    return cards


def create_app() -> FastAPI:
    """The app mounted at :data:`URL_PREFIX`: the HTML page and the same data as JSON."""
    app = FastAPI(title="fscommit commit status", docs_url=None, redoc_url=None, openapi_url=None)
    authorized = [Depends(requires_access_view(AccessView.WEBSITE))]

    @app.exception_handler(HTTPException)
    async def login_first(request: Request, exc: HTTPException) -> Response:
        """Send a browser without credentials to the login page; scripts get the 401."""
        wants_html = "text/html" in request.headers.get("accept", "")
        if exc.status_code == status.HTTP_401_UNAUTHORIZED and wants_html:
            login = get_auth_manager().get_url_login(next_url=str(request.url))
            return RedirectResponse(login, status_code=status.HTTP_303_SEE_OTHER)
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code)

    @app.get("/", response_class=HTMLResponse, dependencies=authorized)
    def page() -> HTMLResponse:
        """Server-rendered: no JavaScript build, nothing to fetch after the page."""
        now_ms = int(time.time() * 1000)
        cards = read_cards(PageSettings.from_airflow_config(), now_ms)
        return HTMLResponse(render_page(cards, now_ms, CONFIG_HINT))

    @app.get("/api/tables", dependencies=authorized)
    def tables() -> dict[str, Any]:
        """What the page shows, for scripts and monitoring."""
        now_ms = int(time.time() * 1000)
        return {
            "now_ms": now_ms,
            "tables": [
                {
                    "name": card.name,
                    "spec_file": card.spec_file,
                    "error": card.error,
                    "report": card.report.to_dict() if card.report else None,
                    "completeness": card.completeness.to_dict() if card.completeness else None,
                }
                for card in read_cards(PageSettings.from_airflow_config(), now_ms)
            ],
        }

    return app
