"""The commit-status page: a small FastAPI app the Airflow api-server mounts.

Which tables it shows is an Airflow setting, ``[fscommit] table_specs``: comma-separated
table spec files (the YAML/JSON files the DAGs and ``fscommit --spec`` read) or glob
patterns; ``[fscommit] aws_conn_id`` names the AWS connection to read tables on S3 with
(unset: the api-server's own AWS identity). Each request reads every table afresh
(checkpoint, sink log, ledger). The front of the page is the overview of
:mod:`~airflow_provider_fscommit.core.status.table_overview`, one line per table linking to
its card; a table that cannot be read shows its error on its own line and card, the
others still show.

Only users the auth manager lets see the Airflow website may see it: the app checks the
same credentials as Airflow's REST API (``Authorization: Bearer`` or the UI's ``_token``
cookie). A browser without them is sent to the auth manager's login page and back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.resource_details import AccessView
from airflow.api_fastapi.core_api.security import requires_access_view
from airflow.configuration import conf
from fastapi import Depends, FastAPI, HTTPException, Request, status
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from airflow_provider_fscommit.core.config.quantities import format_duration, parse_duration
from airflow_provider_fscommit.core.status.table_overview import TableEntry, read_tables
from airflow_provider_fscommit.core.status.table_report import DEFAULT_STALL_TIMEOUT
from airflow_provider_fscommit.hooks.aws import AwsStorageHook
from airflow_provider_fscommit.plugins.render import render_page

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


def read_cards(settings: PageSettings, now_ms: int) -> list[TableEntry]:
    """One entry per spec file: its report and completeness, or the error reading it."""
    return read_tables(
        settings.table_specs,
        settings.stall_timeout,
        now_ms,
        shared=True,
        storage=AwsStorageHook(settings.aws_conn_id).storage,
    )


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
                card.to_dict()
                | {
                    "report": card.report.to_dict() if card.report else None,
                    "completeness": card.completeness.to_dict() if card.completeness else None,
                }
                for card in read_cards(PageSettings.from_airflow_config(), now_ms)
            ],
        }

    return app
