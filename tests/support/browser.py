"""Debian's headless Chromium, driven through its chromedriver by Selenium, as a user.

The pages under test are served on 127.0.0.1; Chromium's own background connections
(updates, sync, QUIC probes) are switched off, as this machine's network refuses them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests.support.debian import missing

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# Screenshots of the journeys, kept after the run (ignored by git) for a human to look at.
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def browser_or_skip() -> None:
    """Skip without Debian's chromium and chromedriver, unless in CI (a missing install)."""
    absent = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if absent:
        missing(", ".join(absent), "chromium chromium-driver")


def chrome(profile: Path) -> webdriver.Chrome:
    """A headless Chromium session with a fresh profile in ``profile``; quit it when done."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1000",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    # The driver path given: Selenium Manager downloads nothing.
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def save_screenshot(driver: webdriver.Chrome, name: str) -> Path:
    """Save the browser's view as ``tests/artifacts/<name>.png``; its path."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    assert driver.save_screenshot(str(path)), path
    print(f"screenshot: {path}")
    return path


def own_text(text: str) -> str:
    """XPath of the element whose own text is ``text`` (a menu entry, a button)."""
    return f"//*[normalize-space(text())='{text}']"


@contextmanager
def browser(profile: Path) -> Iterator[webdriver.Chrome]:
    """:func:`chrome` for the duration of a ``with`` block (skipping without Chromium)."""
    browser_or_skip()
    driver = chrome(profile)
    try:
        yield driver
    finally:
        driver.quit()


class TriggerForm:
    """The Airflow UI's *Trigger Dag* dialog of one DAG, filled in as a user does.

    Params appear as form fields named ``element_<param>``: an object as a JSON editor
    (Monaco, which completes brackets and quotes as one types, so a value is pasted, as
    users paste it), an array of strings as a textarea of lines, a boolean as a switch.
    """

    DIALOG = "[data-scope=dialog][data-part=content]"
    TOAST = "[data-scope=toast][data-part=root]"

    def __init__(self, driver: webdriver.Chrome, base_url: str, dag_id: str) -> None:
        self.driver = driver
        self.dag_id = dag_id
        self.wait = WebDriverWait(driver, 60)
        driver.get(f"{base_url}/dags/{dag_id}")
        self._click("button[aria-label='Trigger Dag']")
        self._visible(f"{self.DIALOG} #element_partition")

    def paste_json(self, param: str, value: object) -> None:
        """Replace the JSON of an object param: select all in its editor, paste ``value``."""
        self.driver.execute_cdp_cmd(
            "Browser.grantPermissions",
            {"permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
        )
        editor = self._visible(f"#element_{param} section")
        ActionChains(self.driver).click(editor).perform()
        written = self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "navigator.clipboard.writeText(arguments[0]).then(() => done('ok'), e => done(`${e}`))",
            json.dumps(value),
        )
        assert written == "ok", written
        keys = ActionChains(self.driver).key_down(Keys.CONTROL).send_keys("a").send_keys("v")
        keys.key_up(Keys.CONTROL).perform()

    def type_lines(self, param: str, lines: list[str]) -> None:
        """Replace the lines of an array param's textarea."""
        area = self._visible(f"#element_{param}")
        area.send_keys(Keys.CONTROL, "a")
        area.send_keys(Keys.DELETE)
        area.send_keys("\n".join(lines))

    def switch(self, param: str, on: bool) -> None:
        """Set a boolean param's switch."""
        box = self.driver.find_element(By.CSS_SELECTOR, f"input[name=element_{param}]")
        if box.is_selected() != on:
            self.driver.find_element(By.ID, f"switch:element_{param}").click()
        assert box.is_selected() == on

    def submit(self) -> None:
        """Press *Trigger* (once the toasts of an earlier attempt no longer cover it)."""
        self.wait.until(ec.invisibility_of_element_located((By.CSS_SELECTOR, self.TOAST)))
        self._click("[data-testid=trigger-dag-submit]")

    def refusal(self) -> str:
        """The dialog's text once it shows why the trigger was refused (nothing ran)."""
        self.wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, self.TOAST), "Failed"))
        dialog = self.driver.find_element(By.CSS_SELECTOR, self.DIALOG)
        # The reason heads the dialog, above the fields: bring it into view for screenshots.
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", dialog)
        return dialog.text

    def triggered_run_id(self) -> str:
        """The run the UI moved to after a successful trigger."""
        prefix = f"/dags/{self.dag_id}/runs/"
        self.wait.until(ec.url_contains(prefix))
        return unquote(self.driver.current_url.split(prefix, 1)[1])

    def _visible(self, css: str):
        return self.wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, css)))

    def _click(self, css: str) -> None:
        self.wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, css))).click()
