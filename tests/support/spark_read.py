"""Read tables back with a Spark line's own pyspark, in a child on that line's Python.

``python tests/support/spark_read.py '<json list of tables>'``, each ``{"name", "format",
"staging", "table"}``, prints ``SPARK_READ_RESULT <json>``: for each table, the schema
Spark reads from staging (through its sink log) and from the published table, and each
one's rows per partition as sorted JSON texts (a multiset that nulls and maps compare in).
Runs on Python 3.9 and PySpark 3.5 as well as on the newest: nothing but pyspark here.
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fscommit_dev.streams import SPARK_TEST_CONF, spark_env

PREFIX = "SPARK_READ_RESULT "


def read(spark, file_format, path):
    frame = spark.read.format(file_format).load(path)
    rows = {}
    for partition, text in frame.selectExpr(
        "concat('dt=', dt, '/hour=', hour)", "to_json(struct(*))"
    ).collect():
        rows.setdefault(partition, []).append(text)
    return {
        "schema": frame.schema.jsonValue(),
        "rows": {partition: sorted(texts) for partition, texts in rows.items()},
    }


def main():
    os.environ.update(spark_env())
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName("fscommit-spark-read")
    for key, value in SPARK_TEST_CONF.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    result = {
        table["name"]: {
            "spark": spark.version,
            "staging": read(spark, table["format"], table["staging"]),
            "published": read(spark, table["format"], table["table"]),
        }
        for table in json.loads(sys.argv[1])
    }
    print(PREFIX + json.dumps(result))
    spark.stop()


if __name__ == "__main__":
    main()
