"""The commit-status page in a real headless browser, served by a real api-server.

A real stream is committed by a real run of the example sweep DAG (scheduler, worker,
Spark, Hive metastore); late rows then arrive for one hour. Debian's chromium, driven
through its chromedriver by Selenium, opens the page as a user does (logging in first),
and a screenshot is saved. Anonymous requests are refused.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from fscommit_dev.airflow_services import (
    login_required_env,
    running_services,
    services_airflow_env,
)
from fscommit_dev.metastore.client import create_table
from fscommit_dev.streams import StreamingTable, hourly_batches, row
from tests.support.browser import browser, browser_or_skip, own_text, save_screenshot
from tests.support.example_dags import (
    DAY,
    connect_connection,
    example_airflow_extra_env,
    example_spec,
)

LOGIN = ("operator", "fscommit-page-test")


@pytest.mark.slow
def test_status_page_shows_a_table_committed_by_a_real_dag_run(
    spark, metastore, postgres, connect_server, tmp_path
):
    browser_or_skip()  # before the services start: no browser, nothing to see
    stream = StreamingTable(tmp_path / "stream")
    stream.add_batches(*hourly_batches("2026-11-20", [0, 1, 3, 4, 5]))
    stream.run(spark)  # watermark 04:10: hours 00 to 03 committable, 04 and 05 pending
    table = tmp_path / "table"
    create_table(metastore, "page", table)
    spec = example_spec(stream, table, "page")
    extra = example_airflow_extra_env(tmp_path, spec, metastore, connect_connection(connect_server))
    extra["AIRFLOW__FSCOMMIT__TABLE_SPECS"] = f"{tmp_path / 'table.json'},{tmp_path / 'nope.yaml'}"
    extra |= login_required_env(tmp_path / "passwords.json", *LOGIN)
    airflow = services_airflow_env(tmp_path / "airflow", extra, postgres)
    assert airflow.run("dags", "reserialize").returncode == 0
    ledger = CommitLedger(str(table))

    with running_services(airflow, LOGIN) as services:
        # The sweep commits 00, 01 and 03 in one real run (02 has no files).
        assert services.rest("PATCH", "/dags/fscommit_sweep", json={"is_paused": False}).ok
        runs = services.wait_for_runs("fscommit_sweep", 1)
        assert set(runs.values()) == {"success"}, services.log_tail()
        (record,) = ledger.read(f"{DAY}/hour=00").policy_commits.values()
        run_id = record["origin"]["run_id"]
        assert record["origin"]["dag_id"] == "fscommit_sweep" and run_id in runs
        # Late rows for hour 01, and a row that moves the watermark to 05:10 (04 committable).
        stream.add_batches([row(900, "2026-11-20T01:50:00Z"), row(901, "2026-11-20T06:50:00Z")])
        stream.run(spark)

        # Anonymous: the JSON is refused, a browser is sent to log in.
        page_url = f"{services.url}/fscommit/"
        assert requests.get(f"{page_url}api/tables", timeout=30).status_code == 401
        anonymous = requests.get(
            page_url, headers={"Accept": "text/html"}, allow_redirects=False, timeout=30
        )
        assert anonymous.status_code == 303 and "/auth/" in anonymous.headers["location"]
        # The plugin is registered, with its entry in the UI's navigation.
        plugins = services.rest("GET", "/plugins").json()["plugins"]
        (plugin,) = [p for p in plugins if p["name"] == "fscommit"]
        assert plugin["external_views"][0]["url_route"] == "fscommit"

        tables = requests.get(
            f"{page_url}api/tables", headers=services._headers(), timeout=60
        ).json()["tables"]
        assert [t["name"] for t in tables] == ["table", "nope"]
        states = {p["partition"]: p["state"] for p in tables[0]["report"]["partitions"]}
        assert states == {
            f"{DAY}/hour=00": "committed",
            f"{DAY}/hour=01": "late-data",
            f"{DAY}/hour=03": "committed",
            f"{DAY}/hour=04": "committable",
            f"{DAY}/hour=05": "pending",
            f"{DAY}/hour=06": "pending",
        }
        assert "nope.yaml" in tables[1]["error"]
        # The sweep's commit run published 03 as complete (02 has no rows, its hour is
        # over); late data in 01 leaves it counted, 04 (committable now) holds it.
        completeness = tables[0]["completeness"]
        assert completeness["published"]["complete_through"] == "2026-11-20T03:00:00.000+00:00"
        assert completeness["published"]["watermark"] == "2026-11-20T04:10:00.000+00:00"
        assert completeness["current"]["complete_through"] == "2026-11-20T03:00:00.000+00:00"
        assert completeness["current"]["reason"] == f"{DAY}/hour=04 is committable, not committed"

        with browser(tmp_path / "chromium-profile") as driver:
            wait = WebDriverWait(driver, 60)
            driver.get(page_url)  # -> the login form -> back here, with the _token cookie
            wait.until(ec.presence_of_element_located((By.NAME, "username"))).send_keys(LOGIN[0])
            driver.find_element(By.NAME, "password").send_keys(LOGIN[1])
            driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "section.table-card")))
            assert driver.current_url == page_url
            text = driver.find_element(By.TAG_NAME, "body").text
            assert "Partition commit status" in text
            assert "Safe watermark\n2026-11-20 05:10:00 UTC" in text
            assert "Complete through\n2026-11-20 03:00:00 UTC (published " in text
            assert f"{DAY}/hour=04 is committable, not committed" in text
            cards = driver.find_elements(By.CSS_SELECTOR, "section.table-card")
            assert [c.find_element(By.TAG_NAME, "h2").text for c in cards] == ["table", "nope"]
            assert "cannot read the table spec file" in cards[1].text
            shown = {
                r.find_element(By.CSS_SELECTOR, "td.p").text: r.get_attribute("data-state")
                for r in cards[0].find_elements(By.CSS_SELECTOR, "tr.partition")
            }
            assert shown == states
            committed = next(
                r
                for r in cards[0].find_elements(By.CSS_SELECTOR, "tr.partition")
                if r.get_attribute("data-state") == "committed"
            )
            link = committed.find_element(By.CSS_SELECTOR, "a.run-link")
            run_url = f"{services.url}/dags/fscommit_sweep/runs/{quote(run_id, safe='')}"
            assert link.get_attribute("href") == run_url
            assert cards[0].find_elements(By.CSS_SELECTOR, "svg.chart rect")
            height = driver.execute_script("return document.body.scrollHeight")
            driver.set_window_size(1400, max(1000, height + 100))
            save_screenshot(driver, "status_page")

            # Inside the Airflow UI: Browse -> Partition commit frames the page, and its run
            # link moves the UI itself to the DAG run's page.
            driver.set_window_size(1400, 1000)
            driver.get(f"{services.url}/dags")
            wait.until(ec.element_to_be_clickable((By.XPATH, own_text("Browse")))).click()
            wait.until(ec.element_to_be_clickable((By.XPATH, own_text("Partition commit")))).click()
            in_ui = (By.CSS_SELECTOR, "iframe[title='Partition commit']")
            driver.switch_to.frame(wait.until(ec.presence_of_element_located(in_ui)))
            wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "a.run-link"))).click()
            driver.switch_to.default_content()
            wait.until(ec.url_to_be(run_url))
            wait.until(ec.invisibility_of_element_located(in_ui))
            wait.until(ec.text_to_be_present_in_element((By.TAG_NAME, "body"), run_id))
            save_screenshot(driver, "status_page_run_link")
