"""``CatalogTable``: one table of a catalog, as the commit policies and readers use it.

Flink's ``TableMetaStoreFactory.TableMetaStore``: the one interface a catalog policy talks
to. A table can read and set its parameters (a commit run's completeness goes there),
add or alter partitions, drop them, and, where the catalog has them, hold done
partitions. What a catalog can do is declared on its class, not guessed from its name:

- ``holds_done_partitions``: it holds Paimon's done partitions (Hive partitions);
- ``completeness_with_data``: it writes the table's completeness in the same commit as
  the partitions' data (an Iceberg transaction), so :meth:`CatalogTable.add_partitions`
  takes it;
- ``switches_location``: it switches a partition's location in one call, so a rewrite's
  readers move to the new directory at once.

The spec's validation sits below this layer and reads the same facts as data
(``core.config.catalog_capabilities``); a subclass that disagrees with it fails when it is
defined.

The completeness only moves forward in a catalog, as in the ledger: setting it compares
with what the table holds (:func:`forward`) and writes nothing when the table holds it, or
later values (a catalog can be ahead of the ledger: a run whose ledger record failed after
the catalog committed).
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from airflow_provider_fscommit.core.config.catalog_capabilities import (
    CATALOG_CAPABILITIES,
    CatalogCapability,
)
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.quantities import epoch_ms
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.publish.published import CommitContext
from airflow_provider_fscommit.core.status.completeness import forward_parameters

# Each capability flag and the capability it declares.
_FLAGS = {
    "holds_done_partitions": CatalogCapability.DONE_PARTITIONS,
    "completeness_with_data": CatalogCapability.COMPLETENESS_WITH_DATA,
    "switches_location": CatalogCapability.LOCATION_SWITCH,
}


class CatalogTable(abc.ABC):
    """One table of one catalog; ``name`` says which, for messages; ``kind`` is the
    policy that commits to it."""

    kind: ClassVar[PolicyKind]
    holds_done_partitions: ClassVar[bool] = False
    completeness_with_data: ClassVar[bool] = False
    switches_location: ClassVar[bool] = False
    name: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A catalog's flags say what the config's capability table says of its kind."""
        super().__init_subclass__(**kwargs)
        if "kind" not in cls.__dict__:
            return
        declared = {c for flag, c in _FLAGS.items() if getattr(cls, flag)}
        if declared != CATALOG_CAPABILITIES[cls.kind]:
            raise TypeError(
                f"{cls.__name__} declares {sorted(declared)}, but the capability table "
                f"(core.config.catalog_capabilities) gives {cls.kind} "
                f"{sorted(CATALOG_CAPABILITIES[cls.kind])}; make them agree"
            )

    @abc.abstractmethod
    def read_table_parameters(self) -> dict[str, str]:
        """The table's parameters, as readers of its published completeness see them."""

    @abc.abstractmethod
    def set_table_parameters(self, spec: TableSpec, parameters: Mapping[str, str]) -> bool:
        """Set the completeness ``parameters``, keeping the table's other parameters, each
        value forward only (:func:`forward`); write nothing when the table holds them or
        later ones. Returns whether it wrote."""

    @abc.abstractmethod
    def add_partitions(
        self, contexts: Sequence[CommitContext], completeness: Mapping[str, str] | None = None
    ) -> int | None:
        """Add the partitions the table lacks, alter those whose location or facts changed;
        one already as this commit would write it is left alone (a rerun writes nothing).
        ``completeness``: the table parameters to write in the same commit, taken by a
        catalog that ``completeness_with_data`` (others get it from
        :meth:`set_table_parameters`). Returns the id of the table version now holding
        the partitions, for a catalog that versions its tables (an Iceberg snapshot)."""

    @abc.abstractmethod
    def drop_partitions(self, spec: TableSpec, partitions: Sequence[Sequence[str | None]]) -> int:
        """Drop partitions given by their values, and their done partitions when the chain
        adds them; files stay (expiration deletes them after the drop). Returns how many of
        the partitions existed; one already gone is dropped already (a rerun)."""

    def add_done_partitions(self, contexts: Sequence[CommitContext]) -> None:
        """Add each partition's done partition (idempotent: one already there is kept);
        only a catalog that ``holds_done_partitions`` overrides it."""
        raise NotImplementedError(f"{type(self).__name__} holds no done partitions")


def holds(current: Mapping[str, str] | None, parameters: Mapping[str, str]) -> bool:
    """Whether a table's parameters already hold these (then a catalog is not written)."""
    return all((current or {}).get(key) == value for key, value in parameters.items())


def forward(
    current: Mapping[str, str] | None, parameters: Mapping[str, str], table: str
) -> dict[str, str] | None:
    """The completeness parameters to write over ``current`` (catalog ``table``'s), each
    value the later of the two (``forward_parameters``); None when ``current`` holds them
    already, or later ones. A value keeps the spelling of the side it comes from, so a
    table that holds an instant is not written again to spell it another way."""
    held = current or {}
    written: dict[str, str] = {}
    for key, value in forward_parameters(held, parameters, table).items():
        spelled = next((s[key] for s in (held, parameters) if _same(s.get(key), value)), None)
        if spelled is not None:  # neither side has it: not a value to publish
            written[key] = spelled
    return None if holds(held, written) else written


def _same(text: str | None, value: str) -> bool:
    """Whether ``text`` is the instant ``value`` is (however it is spelled)."""
    if text is None:
        return False
    try:
        return epoch_ms(text) == epoch_ms(value)
    except ConfigError:
        return text == value
