"""``FsCommitPlugin``: the commit-status page, mounted in the api-server and linked in the UI.

Registered twice, as Airflow's own providers do: through the provider info (``plugins``),
which Airflow reads only with ``[core] lazy_discover_providers = False``, and through the
``airflow.plugins`` entry point, which it always reads. Both name the same plugin, which
Airflow loads once.
"""

from __future__ import annotations

from typing import Any, ClassVar

from airflow.plugins_manager import AirflowPlugin

from airflow_provider_fscommit.plugins.status_page import URL_PREFIX, create_app
from airflow_provider_fscommit.version_compat import ui_menu_entries

PLUGIN_NAME = "fscommit"


class FsCommitPlugin(AirflowPlugin):
    """The page at ``/fscommit/`` and its entry in the UI's navigation (Browse menu, 3.1+)."""

    name = PLUGIN_NAME
    fastapi_apps: ClassVar[list[dict[str, Any]]] = [
        {"app": create_app(), "url_prefix": URL_PREFIX, "name": "fscommit commit status"}
    ]
    external_views: ClassVar[list[dict[str, Any]]] = ui_menu_entries(
        [
            {
                "name": "Partition commit",
                # Relative to the UI's base URL; url_route shows it inside the UI (an iframe).
                "href": f"{URL_PREFIX.lstrip('/')}/",
                "url_route": "fscommit",
                "destination": "nav",
                "category": "browse",
            }
        ]
    )
