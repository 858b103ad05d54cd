"""Run one test streaming query in its own process: ``stream_job.py '<config json>'``.

Used by tests that SIGKILL a query mid-batch; see ``streams.StreamingTable.run_in_child``.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.streams import new_spark_session, run_query

if __name__ == "__main__":
    run_query(new_spark_session("fscommit-stream-job"), json.loads(sys.argv[1]))
