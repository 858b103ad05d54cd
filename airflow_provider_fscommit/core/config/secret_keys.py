"""Which names carry a secret: a table spec must hold none.

A spec is stored in plain files, in a DAG's serialized form and in the operators' rendered
templates, so a credential in it would be shown to everyone who can read those. The words
below mark the property names that hold one (pyiceberg's ``credential``, ``token``,
``s3.secret-access-key``, ``adls.account-key``, ...); such a value comes from an Airflow
connection or the catalog's own environment instead.
"""

from __future__ import annotations

SECRET_WORDS = ("secret", "token", "credential", "password", "access-key", "account-key")


def holds_secret(name: str) -> bool:
    """Whether the property ``name`` carries a secret (any case)."""
    return any(word in name.lower() for word in SECRET_WORDS)
