"""Loading user classes (custom time extractors and commit policies) by dotted path."""

from __future__ import annotations

import importlib
from typing import TypeVar

from airflow_provider_fscommit.core.errors import ConfigError

T = TypeVar("T")


def load_class(dotted_path: str, base: type[T], option: str) -> type[T]:
    """Import ``package.module.ClassName`` and check that it subclasses ``base``."""
    module_name, _, class_name = dotted_path.rpartition(".")
    if not module_name:
        raise ConfigError(
            f"{option}: {dotted_path!r} is not a dotted path; write 'package.module.ClassName'"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"{option}: cannot import module {module_name!r} ({exc}); install it where the "
            "task runs or fix the path"
        ) from None
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type) or not issubclass(cls, base):
        raise ConfigError(
            f"{option}: {dotted_path!r} is not a subclass of {base.__module__}.{base.__name__}"
        )
    return cls
