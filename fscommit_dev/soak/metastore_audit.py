"""Every call the metastore served, from Hive's own audit log.

The metastore's handler logs one audit line per call (``ugi=… ip=… cmd=<call> : db=…``)
to the logger ``org.apache.hadoop.hive.metastore.HiveMetaStore.audit``, which pyspark's
jars leave off. A log4j2 configuration given to the soak's metastore JVM writes it to a
file, each line stamped in epoch milliseconds, so the calls per committed partition are
counted at the server, whoever made them (the commit tasks, the sensors' completeness
reads, the harness's own reader, which the soak subtracts).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

_CONFIG = """\
status = error
appender.audit.type = File
appender.audit.name = audit
appender.audit.fileName = {log}
appender.audit.append = true
appender.audit.layout.type = PatternLayout
appender.audit.layout.pattern = %d{{UNIX_MILLIS}} %m%n
logger.audit.name = org.apache.hadoop.hive.metastore.HiveMetaStore.audit
logger.audit.level = info
logger.audit.additivity = false
logger.audit.appenderRef.audit.ref = audit
rootLogger.level = error
"""
_LINE = re.compile(r"^(\d+) .*\bcmd=([A-Za-z_]+)")


def audit_jvm_options(state_dir: Path) -> list[str]:
    """The JVM option that makes the metastore write its audit log in ``state_dir``."""
    state_dir.mkdir(parents=True, exist_ok=True)
    config = state_dir / "audit-log4j2.properties"
    config.write_text(_CONFIG.format(log=audit_log(state_dir)))
    return [f"-Dlog4j2.configurationFile={config}"]


def audit_log(state_dir: Path) -> Path:
    return state_dir / "audit.log"


def calls(state_dir: Path, since_ms: int = 0, until_ms: int | None = None) -> Counter:
    """The calls served in the window, by name (empty when no audit log was written)."""
    log = audit_log(state_dir)
    counted: Counter = Counter()
    if not log.exists():
        return counted
    for line in log.read_text(errors="replace").splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        at = int(match.group(1))
        if at >= since_ms and (until_ms is None or at <= until_ms):
            counted[match.group(2)] += 1
    return counted
