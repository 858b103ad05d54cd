"""Run one test streaming query in its own process: ``stream_job.py '<config json>'``.

Used by tests that SIGKILL a query mid-batch, and to write streams with another Spark
line's pyspark (this file runs on that line's Python, 3.9 included); see
``streams.StreamingTable.run_in_child``. The progress of the batches it ran is appended to
``<base>/child-progress.jsonl``.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fscommit_dev.streams import CHILD_PROGRESS, new_spark_session, run_query

if __name__ == "__main__":
    config = json.loads(sys.argv[1])
    progress = run_query(new_spark_session("fscommit-stream-job"), config)
    with open(Path(config["base"]) / CHILD_PROGRESS, "a") as out:
        out.writelines(json.dumps(p, default=str) + "\n" for p in progress)
