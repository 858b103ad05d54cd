"""Fail when pyspark's Python files and its jars are different Spark versions.

`pyspark-client` (a dependency of the Spark provider) overwrites pyspark's Python files;
scripts/install.sh reinstalls pyspark, and this check proves it worked, every time.
"""

import pathlib
import sys

import pyspark

jars = pathlib.Path(pyspark.__file__).parent / "jars"
core = sorted(jars.glob("spark-core_*.jar"))
if not core or not core[0].name.endswith(f"-{pyspark.__version__}.jar"):
    sys.exit(
        f"pyspark Python files are {pyspark.__version__} but the jars are "
        f"{[p.name for p in core]}: reinstall with scripts/install.sh"
    )
