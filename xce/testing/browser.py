"""A real headless Chromium for checking the dashboard: the browser tests and the screenshot script.

It drives Debian's ``chromium`` through ``/usr/bin/chromedriver`` with Selenium (a test
dependency, imported only here); nothing is ever downloaded, Selenium's driver manager included.
Every request a page makes is read back from Chromium's own network log (the DevTools
``Network.requestWillBeSent`` events), so a check can fail on any request that leaves the
controller: a CDN script, a web font, a validator badge.
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
        self.requested: list[str] = []
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
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(
            lambda d: condition(), message=f"timed out after {timeout}s waiting for {what}")

    def resize(self, width: int, height: int) -> None:
        self.driver.set_window_size(width, height)

    # -- what the pages asked for ----------------------------------------------------------
    def collect(self) -> list[str]:
        """Every URL requested since the last call, added to :attr:`requested`."""
        new = []
        for entry in self.driver.get_log("performance"):
            msg = json.loads(entry["message"])["message"]
            if msg.get("method") == "Network.requestWillBeSent":
                new.append(msg["params"]["request"]["url"])
        self.requested.extend(new)
        self.console.extend(self.driver.get_log("browser"))
        return new

    def external_requests(self) -> list[str]:
        """Requested URLs that went anywhere but the controller (scheme, host and port compared)."""
        self.collect()
        home = urlsplit(self.base_url)
        return [u for u in self.requested if urlsplit(u).scheme not in _LOCAL_SCHEMES
                and (urlsplit(u).scheme, urlsplit(u).netloc) != (home.scheme, home.netloc)]

    def screenshot(self, path: str | os.PathLike[str]) -> Path:
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(out))
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
