"""The auditor's admin in a real browser: headless Chromium (Selenium, the Debian chromedriver)
against ``manage.py serve`` with real data (a sync, rotations, a failed rotation, a drifted
target, an overdue secret). Each page is saved as a screenshot in the test's temporary folder,
its path printed; the assertions read the page's DOM as the browser built it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.processes.live import ROOT, LiveServer, server_env, start_server, write_definition
from tests.tools import require

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.options import Options  # noqa: E402 - after the skip
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.slow
PASSWORD = "browser-test-pw-4f1c"  # a throwaway superuser's


def _secret(name: str, path: str, period: str) -> dict[str, object]:
    return {"name": name, "kind": "random_password", "rotation_period": period,
            "targets": [{"provider": "local", "kind": "file", "config": {"path": path, "format": "dotenv"}}]}


@pytest.fixture(scope="module", autouse=True)
def browser_tools() -> tuple[str, str]:
    """Checked before the module's server starts: without them every test here skips, saying why."""
    return require("chromium"), require("chromedriver")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("admin-browser")


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[LiveServer]:
    config = write_definition(folder, {"version": "1.0", "secrets": [
        _secret("db_password", "out/db.env", "30d"), _secret("api_token", "out/api.env", "90d"),
        _secret("cache_key", "out/cache.env", "7d")]})
    env = server_env(data_dir=folder / "data", config=config)
    live = start_server(env, folder / "serve.log")
    try:
        _real_history(live, folder)
        subprocess.run([sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", "auditor",
                        "--email", "auditor@example.com"], cwd=ROOT, check=True, timeout=120,
                       env={**env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD}, capture_output=True)
        yield live
    finally:
        live.stop()


def _real_history(live: LiveServer, folder: Path) -> None:
    assert live.call("POST", "/sync", {})[0] == 200
    assert live.call("POST", "/rotation/execute", {"secret_name": "db_password", "force": True})[0] == 200
    assert live.call("POST", "/rotation/execute", {"secret_name": "no_such_secret"})[0] == 404
    (folder / "out" / "cache.env").write_text("CACHE_KEY=changed-behind-our-back\n")
    assert live.call("POST", "/drift/check", {})[1]["has_drift"] is True
    # api_token was made 100 days ago: overdue (a 90-day period).
    lock_path = folder / ".gitsecrets.lock"
    lock = json.loads(lock_path.read_text())
    lock["secrets"]["api_token"]["created_at"] = (datetime.now(UTC) - timedelta(days=100)).isoformat()
    lock_path.write_text(json.dumps(lock, indent=2))


@pytest.fixture(scope="module")
def browser(server: LiveServer, folder: Path, browser_tools: tuple[str, str]) -> Iterator[WebDriver]:
    chromium, chromedriver = browser_tools
    options = Options()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,1000", f"--user-data-dir={folder / 'chromium-profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    driver.set_page_load_timeout(60)
    try:
        driver.get(server.url + "/admin/login/")
        driver.find_element(By.NAME, "username").send_keys("auditor")
        driver.find_element(By.NAME, "password").send_keys(PASSWORD)
        driver.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
        # The click does not wait for the login's redirect: a page asked for before it lands is
        # replaced by the admin's index when it does.
        WebDriverWait(driver, 60).until(lambda d: "/admin/login/" not in d.current_url)
        yield driver
    finally:
        driver.quit()


def visit(browser: WebDriver, server: LiveServer, folder: Path, path: str, shot: str) -> str:
    """Open ``path``, save a full-width screenshot as ``<shot>.png``, print where; the page's text."""
    browser.get(server.url + path)
    height = browser.execute_script("return document.body.scrollHeight")
    browser.set_window_size(1400, min(max(int(height), 600), 4000))
    target = folder / f"{shot}.png"
    browser.save_screenshot(os.fspath(target))
    print(f"screenshot: {target}")
    return str(browser.find_element(By.TAG_NAME, "body").text)


def test_the_overview_shows_overdue_and_drifted_secrets(browser: WebDriver, server: LiveServer, folder: Path) -> None:
    text = visit(browser, server, folder, "/admin/audit/auditentry/secrets/", "overview")
    assert "3 of 3 secrets shown" in text
    rows = {r.find_element(By.TAG_NAME, "th").text: r.text
            for r in browser.find_elements(By.CSS_SELECTOR, "#secrets-overview tbody tr")}
    assert "overdue" in rows["api_token"].split() and "no drift" in rows["api_token"]
    assert "drifted" in rows["cache_key"]
    assert "never" not in rows["db_password"].split("generated")[1].split()[0]  # rotated once


def test_the_overview_filters_drifted_secrets(browser: WebDriver, server: LiveServer, folder: Path) -> None:
    visit(browser, server, folder, "/admin/audit/auditentry/secrets/?drift=drifted", "overview-drifted")
    names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#secrets-overview tbody th")]
    assert names == ["cache_key"]


def test_the_charts_render_with_titles_and_bars(browser: WebDriver, server: LiveServer, folder: Path) -> None:
    visit(browser, server, folder, "/admin/audit/auditentry/charts/", "charts")
    charts = browser.find_elements(By.CSS_SELECTOR, "svg[role=img]")
    assert [c.get_attribute("id") for c in charts] == ["operations", "rotations", "due"]
    for chart in charts:
        assert chart.size["width"] > 300 and chart.find_elements(By.TAG_NAME, "rect")
    titles = [t.get_attribute("textContent") or ""
              for t in browser.find_elements(By.CSS_SELECTOR, "#rotations rect title")]
    assert any(t.endswith(" 1 failed") for t in titles) and any(t.endswith(" 1 rotated") for t in titles)


def test_the_failed_rotation_shows_its_message(browser: WebDriver, server: LiveServer, folder: Path) -> None:
    text = visit(browser, server, folder, "/admin/audit/auditentry/?action=execute_rotation&success__exact=0",
                 "failed-rotations")
    assert "failed: secret_not_defined: secret 'no_such_secret' is not defined in the definition file" in text


def test_the_secret_filter_lists_the_bulk_sync(browser: WebDriver, server: LiveServer, folder: Path) -> None:
    visit(browser, server, folder, "/admin/audit/auditentry/?secret=api_token", "rows-naming-api_token")
    rows = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "#result_list tbody tr")]
    assert any(" sync secrets " in f" {r} " and "api_token" in r for r in rows)


def test_a_wrong_admin_url_is_the_admins_html_page(browser: WebDriver, server: LiveServer, folder: Path) -> None:
    text = visit(browser, server, folder, "/admin/no/such/page/", "not-found")
    assert "Page not found" in text and "There is no admin page at /admin/no/such/page/" in text


def test_a_key_is_created_and_shown_once(browser: WebDriver, server: LiveServer, folder: Path) -> None:
    visit(browser, server, folder, "/admin/apikeys/apikey/add/", "key-form")
    browser.find_element(By.NAME, "name").send_keys("auditor-ci")
    browser.find_element(By.CSS_SELECTOR, "input[name=scopes][value=audit]").click()
    browser.find_element(By.CSS_SELECTOR, "#apikey-create input[type=submit]").click()
    browser.save_screenshot(os.fspath(folder / "key-created.png"))
    print(f"screenshot: {folder / 'key-created.png'}")
    key = browser.find_element(By.ID, "issued-key").text
    assert key.startswith("sk_")
    status, _, _ = _get(server, "/audit/logs?limit=1", key)
    assert status == 200
    text = visit(browser, server, folder, "/admin/apikeys/apikey/", "keys")
    assert "auditor-ci" in text and key not in browser.page_source


def _get(server: LiveServer, path: str, key: str) -> tuple[int, dict[str, str], object]:
    from tests.processes.live import http

    return http("GET", server.url + path, headers={"X-API-Key": key})
