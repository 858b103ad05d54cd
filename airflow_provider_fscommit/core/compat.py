"""What the core takes from Pythons newer than the oldest it runs on.

The Airflow side runs on every Python its Airflow line supports (3.10 and newer), and the
compaction job imports the core on the cluster's own Python; names that only newer
Pythons define are given here once, so the modules that use them read the same on all.
"""

from __future__ import annotations

import enum
import sys

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:

    class StrEnum(str, enum.Enum):
        """Python 3.11's ``enum.StrEnum``: members are their string values, also in ``str()``."""

        __str__ = str.__str__
        __format__ = str.__format__


__all__ = ["StrEnum"]
