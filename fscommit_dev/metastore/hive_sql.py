"""Run Spark SQL against a Hive metastore in a child process: the reader's view.

``python fscommit_dev/metastore/hive_sql.py THRIFT_URI WAREHOUSE '<json list of statements>'``
prints the rows of the last statement as JSON. A separate process, because a Spark session's
catalog implementation is fixed when the session starts.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fscommit_dev.streams import SPARK_TEST_CONF, spark_env


def main() -> None:
    import os

    os.environ.update(spark_env())
    from pyspark.sql import SparkSession

    uri, warehouse, statements = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    builder = SparkSession.builder.master("local[2]").appName("fscommit-hive-sql")
    for key, value in SPARK_TEST_CONF.items():
        builder = builder.config(key, value)
    spark = (
        builder.config("hive.metastore.uris", uri)
        .config("spark.sql.warehouse.dir", warehouse)
        .enableHiveSupport()
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    rows = []
    for statement in statements:
        rows = [r.asDict(recursive=True) for r in spark.sql(statement).collect()]
    print("HIVE_SQL_RESULT " + json.dumps(rows, default=str))
    spark.stop()


if __name__ == "__main__":
    main()
