"""What each catalog can do, as data the spec's validation reads.

A chain is validated by what its catalogs can do, never by their names: a done partition
needs a catalog that holds one, a rewrite of a published partition a catalog whose readers
see the new files at once. The catalogs themselves (``core/catalogs``) sit above the
config, so they declare their capabilities as flags and check, when their class is
defined, that the flags say what this table says (``CatalogTable.__init_subclass__``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from airflow_provider_fscommit.core.compat import StrEnum
from airflow_provider_fscommit.core.config.options import PolicyKind


class CatalogCapability(StrEnum):
    """What a catalog may be able to do; the value says it in a message."""

    #: It holds Paimon's done partitions (Hive partitions: a string partition ``….done``).
    DONE_PARTITIONS = "holds done partitions"
    #: It writes the table's completeness in the same commit as the partitions' data.
    COMPLETENESS_WITH_DATA = "commits the completeness with the data"
    #: It switches a partition's location in one call, so readers move to a rewrite's
    #: directory at once.
    LOCATION_SWITCH = "switches a partition's location atomically"


#: The capabilities of each catalog policy's catalog.
CATALOG_CAPABILITIES: Mapping[PolicyKind, frozenset[CatalogCapability]] = MappingProxyType(
    {
        PolicyKind.METASTORE: frozenset(
            {CatalogCapability.DONE_PARTITIONS, CatalogCapability.LOCATION_SWITCH}
        ),
        PolicyKind.GLUE: frozenset(
            {CatalogCapability.DONE_PARTITIONS, CatalogCapability.LOCATION_SWITCH}
        ),
        PolicyKind.ICEBERG: frozenset({CatalogCapability.COMPLETENESS_WITH_DATA}),
    }
)


def catalogs_with(capability: CatalogCapability) -> tuple[PolicyKind, ...]:
    """The catalog policies whose catalog has ``capability``, in the options' order."""
    return tuple(kind for kind, held in CATALOG_CAPABILITIES.items() if capability in held)


def has(kind: PolicyKind, capability: CatalogCapability) -> bool:
    """Whether the policy ``kind`` commits to a catalog with ``capability``."""
    return capability in CATALOG_CAPABILITIES.get(kind, frozenset())
