"""Run Spark SQL against a Hive metastore in a child process: the reader's view.

``python fscommit_dev/metastore/hive_sql.py THRIFT_URI WAREHOUSE`` reads requests from
stdin, one JSON list of statements a line, and answers each with one line on stdout:
``HIVE_SQL_RESULT`` and the rows of its last statement as JSON, or ``HIVE_SQL_ERROR`` and
the traceback (all else it prints goes to stderr). A separate process, because a Spark
session's catalog implementation is fixed when the session starts; one process for many
requests, because its JVM takes seconds to start. Each request runs in a new session of
it (``newSession``: a catalog of its own, so nothing an earlier request resolved is
cached); it exits at the end of stdin.
"""

import json
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fscommit_dev.streams import SPARK_TEST_CONF, spark_env


def main() -> None:
    import os

    os.environ.update(spark_env())
    # The answers own stdout; anything else printed (the JVM's too) goes to stderr.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    from pyspark.sql import SparkSession

    uri, warehouse = sys.argv[1], sys.argv[2]
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
    for request in sys.stdin:
        session = spark.newSession()
        try:
            rows = []
            for statement in json.loads(request):
                rows = [r.asDict(recursive=True) for r in session.sql(statement).collect()]
            answer = "HIVE_SQL_RESULT " + json.dumps(rows, default=str)
        except Exception:  # the caller fails with it; the reader serves the next request
            answer = "HIVE_SQL_ERROR " + json.dumps(traceback.format_exc())
        print(answer, file=answers, flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
