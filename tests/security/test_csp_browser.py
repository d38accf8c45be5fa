"""The Content-Security-Policy the admin and the API docs are served with, in a real browser:
headless Chromium (Selenium, Debian's chromedriver) against ``manage.py serve``. Each page must
render what it exists for, and the browser's console must hold no error (a script, style, image,
font or worker the policy refused is reported there)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes.live import ROOT, LiveServer, http, server_env, start_server, write_definition

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.options import Options  # noqa: E402 - after the skip
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (shutil.which("chromium") and shutil.which("chromedriver")),
                       reason="needs chromium and chromedriver"),
]
PASSWORD = "csp-test-pw-7d2b"  # a throwaway superuser's
WAIT_S = 60


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("csp-browser")


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[LiveServer]:
    config = write_definition(folder, {"version": "1.0", "secrets": [
        {"name": "db_password", "kind": "random_password", "rotation_period": "30d",
         "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/db.env", "format": "dotenv"}}]}]})
    env = server_env(data_dir=folder / "data", config=config)
    live = start_server(env, folder / "serve.log")
    try:
        assert live.call("POST", "/sync", {})[0] == 200
        subprocess.run([sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", "csp-admin",
                        "--email", "csp@example.com"], cwd=ROOT, check=True, timeout=120,
                       env={**env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD}, capture_output=True)
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="module")
def browser(folder: Path) -> Iterator[WebDriver]:
    options = Options()
    options.binary_location = shutil.which("chromium") or "chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,1000", f"--user-data-dir={folder / 'chromium-profile'}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "chromedriver"), options=options)
    driver.set_page_load_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()


def console_errors(browser: WebDriver) -> list[str]:
    """What the console received at level error since last asked (read once, then cleared)."""
    # Chromium's log (the W3C WebDriver has none): selenium's Chrome driver has it, its type does not.
    entries = browser.get_log("browser")  # type: ignore[attr-defined]
    return [entry["message"] for entry in entries if entry["level"] == "SEVERE"]


def open_page(browser: WebDriver, server: LiveServer, path: str, ready: str) -> None:
    """Open ``path`` and wait until an element matching the CSS selector ``ready`` is shown."""
    console_errors(browser)
    browser.get(server.url + path)
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, ready), f"{path}: no {ready}")


def policy(server: LiveServer, path: str) -> dict[str, str]:
    _, headers, _ = http("GET", server.url + path, headers=server.headers) if path.startswith("/audit") else \
        _raw_get(server, path)
    return {part.split()[0]: part.strip() for part in headers["Content-Security-Policy"].split(";") if part.strip()}


def _raw_get(server: LiveServer, path: str) -> tuple[int, dict[str, str], None]:
    import urllib.request

    with urllib.request.urlopen(server.url + path, timeout=30) as response:
        return response.status, dict(response.headers), None


def test_swagger_ui_renders_every_operation_under_its_policy(browser: WebDriver, server: LiveServer) -> None:
    open_page(browser, server, "/docs", ".opblock")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".opblock")) > 20
    assert browser.find_elements(By.CSS_SELECTOR, ".btn.authorize")  # the key scheme is offered
    assert console_errors(browser) == []
    directives = policy(server, "/docs")
    assert directives["script-src"] == "script-src 'self'"
    assert directives["frame-ancestors"] == "frame-ancestors 'none'"


def test_redoc_renders_the_operations_under_its_policy(browser: WebDriver, server: LiveServer) -> None:
    open_page(browser, server, "/redoc", "[data-section-id^='tag/']")
    WebDriverWait(browser, WAIT_S).until(lambda d: "Sync" in d.find_element(By.TAG_NAME, "body").text)
    # ReDoc's bundle always shows a "powered by" logo from its CDN: the policy blocks it (the docs
    # make no third-party request) and ReDoc hides it (its onerror). That is the one message.
    blocked_logo = ("Loading the image 'https://cdn.redoc.ly/redoc/logo-mini.svg' violates the following Content "
                    "Security Policy directive: \"img-src 'self' data:\". The action has been blocked.")
    assert [error.split(" - ", 1)[1] for error in console_errors(browser)] == [blocked_logo]
    assert policy(server, "/redoc")["script-src"] == "script-src 'self'"


def test_the_admin_logs_in_and_shows_its_pages_with_no_inline_style_or_script_allowed(
        browser: WebDriver, server: LiveServer) -> None:
    open_page(browser, server, "/admin/login/", "input[name=username]")
    browser.find_element(By.NAME, "username").send_keys("csp-admin")
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    WebDriverWait(browser, WAIT_S).until(lambda d: "/admin/login/" not in d.current_url)
    assert console_errors(browser) == []
    pages = {"/admin/": "#content-main", "/admin/audit/auditentry/": "#result_list",
             "/admin/audit/auditentry/secrets/": "#secrets-overview", "/admin/audit/auditentry/charts/": "svg",
             "/admin/apikeys/apikey/add/": "#apikey-create"}
    for path, ready in pages.items():
        open_page(browser, server, path, ready)
        assert console_errors(browser) == [], path
    browser.find_element(By.NAME, "name").send_keys("csp-key")
    browser.find_element(By.CSS_SELECTOR, "input[name=scopes][value=audit]").click()
    browser.find_element(By.CSS_SELECTOR, "#apikey-create input[type=submit]").click()
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.ID, "issued-key"))
    # The issued key's own style (a nonce'd block) applied: larger than the text around it.
    size = browser.execute_script("return getComputedStyle(document.getElementById('issued-key')).fontSize")
    body = browser.execute_script("return getComputedStyle(document.querySelector('#content p')).fontSize")
    assert float(size.removesuffix("px")) > float(body.removesuffix("px"))
    assert console_errors(browser) == []
    directives = policy(server, "/admin/login/")
    assert "'unsafe-inline'" not in directives["style-src"] and directives["script-src"] == "script-src 'self'"


def test_the_api_answers_carry_the_policy_too(server: LiveServer) -> None:
    directives = policy(server, "/audit/logs?limit=1")
    assert directives["default-src"] == "default-src 'self'" and directives["frame-ancestors"] == \
        "frame-ancestors 'none'"
