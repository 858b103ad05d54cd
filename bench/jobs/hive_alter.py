"""The metastore baseline: one ``ALTER TABLE … ADD PARTITION`` per partition, Spark SQL.

``hive_alter.py CONFIG`` (JSON: ``uri``, ``warehouse``, ``table`` as ``db.name``,
``location``, ``partitions`` as ``[[dt, hour], …]``). What a Spark job does to register
its partitions without fscommit. One catalog call before the clock starts loads the Hive
client, so the reported seconds are the statements alone; the parent also times the whole
application.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    from pyspark.sql import SparkSession

    config = json.loads(sys.argv[1])
    spark = (
        SparkSession.builder.appName("fscommit-bench-hive-alter")
        .config("hive.metastore.uris", config["uri"])
        .config("spark.sql.warehouse.dir", config["warehouse"])
        .enableHiveSupport()
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql(f"DESCRIBE TABLE {config['table']}").collect()
    started = time.monotonic()
    for dt, hour in config["partitions"]:
        spark.sql(
            f"ALTER TABLE {config['table']} ADD PARTITION (dt='{dt}', hour='{hour}') "
            f"LOCATION '{config['location']}/dt={dt}/hour={hour}'"
        )
    seconds = time.monotonic() - started
    spark.stop()
    print("BENCH_RESULT " + json.dumps({"seconds": seconds}), flush=True)


if __name__ == "__main__":
    main()
