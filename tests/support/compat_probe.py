"""Run by another environment's Python (a compatibility suite's venv), not by pytest.

Imports every module of the installed provider, validates its provider info against the
schema that environment's Airflow ships, and prints one JSON object of what it found, so
the test in the main environment can assert on it.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import traceback
from pathlib import Path


def main() -> None:
    import airflow
    import jsonschema

    import airflow_provider_fscommit
    from airflow_provider_fscommit import version_compat
    from airflow_provider_fscommit.get_provider_info import get_provider_info

    failures = {}
    modules = []
    for module in pkgutil.walk_packages(
        airflow_provider_fscommit.__path__, "airflow_provider_fscommit."
    ):
        modules.append(module.name)
        try:
            importlib.import_module(module.name)
        except Exception:
            failures[module.name] = traceback.format_exc(limit=3)
    schema = json.loads((Path(airflow.__file__).parent / "provider_info.schema.json").read_text())
    try:
        jsonschema.validate(get_provider_info(), schema)
        schema_error = None
    except jsonschema.ValidationError as exc:
        schema_error = str(exc)[:2000]
    from airflow_provider_fscommit.plugins.fscommit import FsCommitPlugin

    print(
        json.dumps(
            {
                "python": list(sys.version_info[:2]),
                "airflow": airflow.__version__,
                "package": airflow_provider_fscommit.__file__,
                "modules": modules,
                "import_failures": failures,
                "schema_error": schema_error,
                "partitioned_asset_events": version_compat.PARTITIONED_ASSET_EVENTS,
                "ui_menu_entries": version_compat.UI_MENU_ENTRIES,
                "external_views": FsCommitPlugin.external_views,
            }
        )
    )


if __name__ == "__main__":
    main()
