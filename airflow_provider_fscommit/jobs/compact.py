"""The compaction application: ``spark-submit compact.py --spec JSON [--partition P ...]``.

The script the cluster runs; the driver's work is
:mod:`airflow_provider_fscommit.jobs.driver`, which the launcher ships with ``--py-files``.
"""

import sys

from airflow_provider_fscommit.jobs.driver import main

if __name__ == "__main__":
    sys.exit(main())
