"""A production day, compressed: live tables on one Airflow deployment, its parts killed.

What the soak's bench run (``bench/soak.py``) and its shortened form in the suite
(``tests/test_soak.py``) share, one concept per module: the tables and their live
queries (``tables``, ``stream_app``), the rows fed to them (``generator``), the
deployment and a supervisor's restarts (``deployment``), the seeded faults (``faults``),
what a reader of the metastore and ``/proc`` see while it runs (``observer``), the checks
at the end (``checks``), the freshness figures (``freshness``) and one run end to end
(``run``).
"""
