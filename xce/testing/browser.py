"""A real headless Chromium for checking the dashboard: the browser tests and the screenshot script.

It drives Debian's ``chromium`` through ``/usr/bin/chromedriver`` with Selenium (a test
dependency, imported only here); nothing is ever downloaded, Selenium's driver manager included.
Every request a page makes is read back from Chromium's own network log (the DevTools
``Network.requestWillBeSent`` events), so a check can fail on any request that leaves the
controller: a CDN script, a web font, a validator badge. A request the browser itself refused to
send (``Network.loadingFailed`` with a ``blockedReason``, e.g. by the page's content security
policy) never left the machine; those are kept apart in :attr:`Browser.blocked`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--disable-dev-shm-usage", "--hide-scrollbars")
#: Schemes that never leave the browser.
_LOCAL_SCHEMES = ("data", "blob", "about", "chrome", "devtools")


class BrowserMissing(RuntimeError):
    pass


class Browser:
    """One browser with a fresh profile, bound to one controller (``base_url``)."""

    def __init__(self, base_url: str, width: int = 1280, height: int = 900) -> None:
        missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
        if missing:
            raise BrowserMissing(f"{' and '.join(missing)} not found: install the Debian packages chromium and "
                                 f"chromium-driver (tools/install-system-packages does)")
        os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must not look for a driver online
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.base_url = base_url.rstrip("/")
        self.profile = tempfile.mkdtemp(prefix="xce-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in (*FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        try:
            self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        except Exception:
            shutil.rmtree(self.profile, ignore_errors=True)
            raise
        self.driver.set_page_load_timeout(60)
        self._urls: dict[str, str] = {}  # request id -> URL, in the order requested
        self._blocked: dict[str, str] = {}  # request id -> why the browser did not send it
        self.console: list[dict[str, Any]] = []

    # -- navigation ------------------------------------------------------------------------
    def get(self, path: str) -> None:
        self.driver.get(self.base_url + path)
        self.collect()

    def css(self, selector: str):
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def all(self, selector: str):
        from selenium.webdriver.common.by import By

        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def wait(self, condition, timeout: float = 30.0, what: str = "condition") -> Any:
        """Until ``condition()`` is true. The dashboard replaces its live part every few seconds, so
        an element found a moment ago may be gone: such a try simply counts as not yet."""
        from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, timeout, poll_frequency=0.1,
                             ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)).until(
            lambda d: condition(), message=f"timed out after {timeout}s waiting for {what}")

    def text(self, selector: str) -> str:
        """The text of the first element matching ``selector``, read again if a refresh replaced it."""
        return self.wait(lambda: self.css(selector).text + "\0", 10, f"{selector} to be readable")[:-1]

    def texts(self, selector: str, cell: str = "") -> list[Any]:
        """The texts of every match (with ``cell``, a list of each match's ``cell`` texts), read at once."""
        if cell:
            script = ("return Array.from(document.querySelectorAll(arguments[0])).map("
                      "e => Array.from(e.querySelectorAll(arguments[1])).map(c => c.innerText.trim()));")
            return self.driver.execute_script(script, selector, cell)
        return self.driver.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0])).map(e => e.innerText.trim());", selector)

    def resize(self, width: int, height: int) -> None:
        self.driver.set_window_size(width, height)

    # -- what the pages asked for ----------------------------------------------------------
    def collect(self) -> None:
        """Read the network and console logs gathered since the last call."""
        for entry in self.driver.get_log("performance"):
            msg = json.loads(entry["message"])["message"]
            params = msg.get("params", {})
            if msg.get("method") == "Network.requestWillBeSent":
                # a redirect reuses the request id: keep each URL under its own key
                key = params["requestId"] if params["requestId"] not in self._urls else f"{params['requestId']}+{len(self._urls)}"
                self._urls[key] = params["request"]["url"]
            elif msg.get("method") == "Network.loadingFailed" and params.get("blockedReason"):
                self._blocked[params["requestId"]] = params["blockedReason"]
        self.console.extend(self.driver.get_log("browser"))

    @property
    def requested(self) -> list[str]:
        """Every URL the pages asked for, sent or not."""
        self.collect()
        return list(self._urls.values())

    @property
    def blocked(self) -> list[str]:
        """URLs the browser refused to send (content security policy and the like)."""
        self.collect()
        return [u for k, u in self._urls.items() if k in self._blocked]

    def external_requests(self) -> list[str]:
        """Requests that went anywhere but the controller (scheme, host and port compared)."""
        self.collect()
        home = urlsplit(self.base_url)
        sent = [u for k, u in self._urls.items() if k not in self._blocked]
        return [u for u in sent if urlsplit(u).scheme not in _LOCAL_SCHEMES
                and (urlsplit(u).scheme, urlsplit(u).netloc) != (home.scheme, home.netloc)]

    def screenshot(self, path: str | os.PathLike[str], full_page: bool = False) -> Path:
        """A PNG of the window, or with ``full_page`` of the whole page however long it is."""
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        size = self.driver.get_window_size()
        if full_page:
            height = self.driver.execute_script("return document.documentElement.scrollHeight")
            self.driver.set_window_size(size["width"], max(size["height"], min(int(height) + 140, 6000)))
        try:
            self.driver.save_screenshot(str(out))
        finally:
            if full_page:
                self.driver.set_window_size(size["width"], size["height"])
        return out

    def close(self) -> None:
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
