"""An installation without an extra, in this process: its packages made unimportable.

``sys.modules[name] = None`` is Python's own "not importable" mark: an import of the
package or of any of its modules then raises ``ModuleNotFoundError`` as a missing package
does. Modules already imported are marked too, so nothing reaches them through the cache;
``monkeypatch`` puts everything back after the test.
"""

from __future__ import annotations

import sys

import pytest

#: What each extra installs that the package imports, by top-level package (or provider).
EXTRA_PACKAGES = {
    "hive": ("hmsclient", "thrift", "airflow.providers.apache.hive"),
    "glue": ("boto3", "botocore", "airflow.providers.amazon"),
    "s3": ("boto3", "botocore", "airflow.providers.amazon"),
    "iceberg": ("pyiceberg",),
}


def without_extra(monkeypatch: pytest.MonkeyPatch, extra: str) -> None:
    """Make the ``extra``'s packages unimportable for the rest of the test."""
    packages = EXTRA_PACKAGES[extra]
    for name in [*packages, *sys.modules]:
        if name in packages or name.startswith(tuple(f"{p}." for p in packages)):
            monkeypatch.setitem(sys.modules, name, None)


#: Python source that imports every module of the installed package, then leaves in
#: ``failures`` what failed to import and in ``loaded`` what it loaded of the extras'
#: packages. Airflow's provider discovery (the factory makes DAGs) reads each installed
#: provider's ``get_provider_info``: that is not an import of the provider.
IMPORT_EVERY_MODULE = """
import importlib, importlib.util, json, pkgutil, sys
import airflow_provider_fscommit as package

OPTIONAL = {"hmsclient", "thrift", "thrift_sasl", "pyhive", "pyiceberg", "boto3", "botocore",
            "aiobotocore", "s3transfer"}
PROVIDERS = ("airflow.providers.apache.hive.", "airflow.providers.amazon.",
             "airflow.providers.apache.iceberg.")
failures = {}
for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    try:
        importlib.import_module(module.name)
    except Exception as exc:
        failures[module.name] = repr(exc)
loaded = sorted(
    name for name in sys.modules
    if name.split(".")[0] in OPTIONAL
    or (name.startswith(PROVIDERS) and not name.endswith(".get_provider_info"))
)
"""
