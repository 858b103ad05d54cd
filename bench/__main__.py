"""``python -m bench``: the one command that runs the benchmarks (see ``bench/run.py``)."""

import sys

from bench.run import main

sys.exit(main())
