"""The example DAGs under a real scheduler, api-server, dag-processor and triggerer.

How users work: trigger the manual DAG from the UI's *Trigger Dag* form in a real browser
(a bad value is refused in the form; a dry run plans only; a run commits), backfill past
hours of the hourly DAG (twice: the second time changes nothing), and let catchup runs
wait in the triggerer until the stream's watermark moves past their hour: it jumps eight
hours at once, and the catch-up and the sweep commit each of them once; a cleared run
runs again and commits nothing new. The hourly DAG's runs are partitioned runs (Airflow
3.2+), keyed by the hour they commit, as are its asset events. Airflow's metadata
database is PostgreSQL, as in production.
"""

from __future__ import annotations

import itertools

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from fscommit_dev.airflow_services import running_services, services_airflow_env
from fscommit_dev.listeners import listening_addresses
from fscommit_dev.metastore.client import create_table
from fscommit_dev.statsd import StatsdListener
from fscommit_dev.streams import StreamingTable, hourly_batches
from tests.support.browser import TriggerForm, browser, browser_or_skip, save_screenshot
from tests.support.example_dags import (
    DAY,
    connect_connection,
    example_airflow_extra_env,
    example_spec,
)

MANUAL_RUNS = "SELECT run_id FROM dag_run WHERE dag_id = 'fscommit_manual'"
BACKFILL = ("--from-date", "2026-11-20T00:00:00+00:00", "--to-date", "2026-11-20T02:00:00+00:00")


@pytest.mark.slow
def test_ui_trigger_backfills_and_the_triggerer_commit_each_partition_once(
    spark, metastore, postgres, connect_server, tmp_path, request
):
    browser_or_skip()  # before anything starts: no browser, nothing to see
    stream = StreamingTable(tmp_path / "stream")
    stream.add_batches(*hourly_batches("2026-11-20", [0, 1, 3, 4, 5]))
    stream.run(spark)  # watermark 04:10: hours 00 to 03 committable, 04 and 05 pending
    table = tmp_path / "table"
    create_table(metastore, "served", table)
    spec = example_spec(stream, table, "served")
    extra = example_airflow_extra_env(tmp_path, spec, metastore, connect_connection(connect_server))
    statsd = StatsdListener()  # the services' metrics (tests/test_metrics.py checks them)
    request.addfinalizer(statsd.close)
    airflow = services_airflow_env(tmp_path / "airflow", extra | statsd.env(), postgres)
    ledger = CommitLedger(str(table))
    assert airflow.run("dags", "reserialize").returncode == 0

    with running_services(airflow) as services:
        assert listening_addresses(postgres.pid) == {f"127.0.0.1:{postgres.port}"}
        for name, process in services.processes.items():
            addresses = listening_addresses(process.pid)
            assert all(a.startswith("127.0.0.1:") for a in addresses), (name, addresses)
        assert f"127.0.0.1:{services.port}" in listening_addresses(
            services.processes["api-server"].pid
        )
        with browser(tmp_path / "chromium-profile") as driver:
            # A value the form's schema refuses: the dialog says why, and nothing runs.
            form = TriggerForm(driver, services.url, "fscommit_manual")
            form.paste_json("partition", {"dt": "..", "hour": "00"})
            form.submit()
            refusal = form.refusal()
            assert "Invalid input for param partition: '..' does not match" in refusal
            save_screenshot(driver, "trigger_form_refused")
            assert not airflow.query(MANUAL_RUNS)

            # A dry run (one policy picked): the plan only, nothing committed.
            form = TriggerForm(driver, services.url, "fscommit_manual")
            form.paste_json("partition", {"dt": "2026-11-20", "hour": "00"})
            form.type_lines("policies", ["success-file"])
            form.switch("dry_run", True)
            form.submit()
            dry_run = form.triggered_run_id()
            assert services.wait_for_runs("fscommit_manual", 1) == {dry_run: "success"}
            assert airflow.task_states("fscommit_manual", dry_run) == {
                "compact": "success",
                "unless_dry_run": "success",
                "commit": "skipped",
            }
            assert not ledger.read(f"{DAY}/hour=00").policy_commits

            # The run: the form's values are the run's conf, and the partition is committed.
            form = TriggerForm(driver, services.url, "fscommit_manual")
            form.paste_json("partition", {"dt": "2026-11-20", "hour": "00"})
            form.type_lines("policies", ["metastore", "success-file"])
            form.switch("dry_run", False)
            form.submit()
            run = form.triggered_run_id()
            assert services.wait_for_runs("fscommit_manual", 2)[run] == "success"
            assert services.rest("GET", f"/dags/fscommit_manual/dagRuns/{run}").json()["conf"] == {
                "partition": {"dt": "2026-11-20", "hour": "00"},
                "policies": ["metastore", "success-file"],
                "dry_run": False,
            }
            assert ledger.read(f"{DAY}/hour=00").policies_current
            driver.refresh()
            WebDriverWait(driver, 60).until(
                ec.text_to_be_present_in_element((By.TAG_NAME, "body"), "Success")
            )
            save_screenshot(driver, "trigger_form_run")

        # Backfill hours 00-02 (00 is committed already, 02 is empty), then unpause.
        first = services.backfill("fscommit_hourly", *BACKFILL)
        assert airflow.run("dags", "unpause", "fscommit_hourly").returncode == 0
        services.wait_for_backfill(first)
        assert services.backfill_run_states(first) == ["success"] * 3
        records = {h: ledger.read(f"{DAY}/hour={h}") for h in ("00", "01", "02")}
        assert {h: len(r.commits) for h, r in records.items()} == {"00": 1, "01": 1, "02": 0}
        assert {h: len(r.policy_commits) for h, r in records.items()} == {
            "00": 1,
            "01": 1,
            "02": 1,
        }
        # Each published hour announced once, keyed by its hour as its run is (catch-up runs
        # of the same hours, partitioned runs the scheduler makes beside the backfill's,
        # found them committed); 00 was committed already, by the manual DAG.
        hours_events = (
            "SELECT partition_key FROM asset_event WHERE source_dag_id = 'fscommit_hourly' "
            "AND partition_key <= '2026-11-20T02:00:00' ORDER BY partition_key"
        )
        events = airflow.query(hours_events)
        assert events == [("2026-11-20T01:00:00",), ("2026-11-20T02:00:00",)]
        assert airflow.query(
            f"SELECT partition_key FROM dag_run WHERE backfill_id = {first} ORDER BY 1"
        ) == [(f"2026-11-20T0{h}:00:00",) for h in range(3)]

        # The same backfill again, re-running completed hours: nothing changes. Once the
        # scheduler's own runs of those hours are finished too: a backfill leaves an hour
        # whose latest run is still queued or running to that run.
        services.wait_until(
            "the scheduler's runs of the backfilled hours",
            lambda: (
                not airflow.query(
                    "SELECT 1 FROM dag_run WHERE dag_id = 'fscommit_hourly' "
                    "AND partition_key <= '2026-11-20T02:00:00' "
                    "AND state NOT IN ('success', 'failed')"
                )
            ),
        )
        again = services.backfill("fscommit_hourly", *BACKFILL, "--reprocess-behavior", "completed")
        assert again != first
        services.wait_for_backfill(again)
        assert services.backfill_run_states(again) == ["success"] * 3
        assert {h: ledger.read(f"{DAY}/hour={h}") for h in records} == records
        assert airflow.query(hours_events) == events
        # Clearing hour 01's run runs it again: it commits nothing new, announces nothing.
        states = services.rerun_cleared("fscommit_hourly", "2026-11-20T01:00:00")
        assert states["partition_commit.commit"] == "skipped"
        assert {h: ledger.read(f"{DAY}/hour={h}") for h in records} == records
        assert airflow.query(hours_events) == events

        # Catchup reached hour 04: its sensor waits in the triggerer ...
        hour_04 = (
            "SELECT 1 FROM task_instance ti JOIN dag_run r ON ti.dag_id = r.dag_id "
            "AND ti.run_id = r.run_id WHERE ti.dag_id = 'fscommit_hourly' "
            "AND ti.task_id = 'partition_commit.wait' "
            "AND r.partition_key = '2026-11-20T04:00:00' AND r.run_type = 'scheduled' "
            "AND ti.state = '{}'"
        )
        services.wait_for_state(hour_04.format("deferred"))
        assert not ledger.read(f"{DAY}/hour=04").commits
        # ... until the stream moves its watermark past the hour. It comes back after an
        # outage with hours 12 and 13: its watermark jumps to 12:10, and hours 04 to 11
        # (06 to 11 empty) are all committable at once. The sweep, unpaused now, races
        # the hourly catch-up for the staged ones; each hour is committed once.
        stream.add_batches(*hourly_batches("2026-11-20", [12, 13]))
        stream.run(spark)
        assert services.rest("PATCH", "/dags/fscommit_sweep", json={"is_paused": False}).ok
        services.wait_for_state(hour_04.format("success"))
        caught_up = "partition_key BETWEEN '2026-11-20T04:00:00' AND '2026-11-20T11:00:00'"
        assert set(services.wait_for_runs("fscommit_hourly", 8, where=caught_up).values()) == {
            "success"
        }
        assert set(services.wait_for_runs("fscommit_sweep", 1).values()) == {"success"}
        jumped = {f"{h:02d}": ledger.read(f"{DAY}/hour={h:02d}") for h in range(4, 12)}
        assert all(r.policies_current for r in jumped.values())
        assert {h: (len(r.commits), len(r.policy_commits)) for h, r in jumped.items()} == {
            h: (1 if h in ("04", "05") else 0, 1) for h in jumped
        }
        assert not ledger.read(f"{DAY}/hour=12").policy_commits
        # The triggerer counted the table's deferred sensors waiting in it, and fewer once
        # their triggers fired.
        waiting = [
            m.value
            for m in statsd.metrics()
            if m.name == "airflow.fscommit.partitions.waiting" and m.tags == {"table": "served"}
        ]
        assert max(waiting) >= 1 and any(b < a for a, b in itertools.pairwise(waiting)), waiting
        assert statsd.wait_for("airflow.fscommit.partitions.waiting.served")
        # One log per triggerer that ran the trigger (the services restarted for a backfill).
        log = "".join(
            path.read_text()
            for path in (airflow.home / "logs" / "dag_id=fscommit_hourly").glob(
                "run_id=scheduled__2026-11-20T05:00:00+00:00__2026-11-20T04:00:00__*"
                "/task_id=partition_commit.wait/*trigger*"
            )
        )
        assert "hour=04: waiting: watermark 2026-11-20T04:10:00" in log
        assert "Trigger fired event" in log
