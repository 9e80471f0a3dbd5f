"""The dashboard in a real headless Chromium against a live cluster (controller, scheduler, two
workers): what a person sees, and that no page asks anything of another host (the ``browser``
fixture fails a test on any request that leaves the controller).

Pages refresh their live part every few seconds, so tests read text through ``Browser.text`` and
``Browser.texts`` (read at once, or again if a refresh replaced the element) and wait on
conditions, never on sleeps."""

from __future__ import annotations

import getpass

import pytest
from ui_helpers import CONFIG, People, browser, cluster, log_in, only_the_controller, people, wait_for  # noqa: F401

from xce.client.launch import start_controller
from xce.testing.browser import Browser

pytestmark = pytest.mark.integration


def _severe(b) -> list[dict]:
    b.collect()
    return [e for e in b.console if e.get("level") == "SEVERE"]


def test_log_in_and_see_the_hosts_of_the_cluster(cluster, people, browser, tmp_path):
    b = browser
    b.get("/")
    assert b.driver.current_url.endswith("/ui/login?next=%2Fui%2F")  # / leads to the dashboard, which asks to log in
    b.css("#token").send_keys("xce2_" + "0" * 16 + "." + "A" * 43)  # well formed, never issued
    b.css("#login").click()
    assert "not valid for this cluster" in b.text("#message")
    b.screenshot(tmp_path / "login.png")
    b.collect()
    b.console.clear()  # the refused log-in above was a 401, rightly

    log_in(b, people.token("me"))
    assert b.text("#whoami") == getpass.getuser()
    rows = b.texts("#hosts tbody tr", "td")
    assert sorted(r[0] for r in rows) == sorted(cluster.worker_names)
    for name, status, slots, *_ in rows:
        assert status == "ok" and slots.endswith("/2"), (name, status, slots)  # two slots each
    b.wait(lambda: "scheduler up" in b.text("#sched-badge"), 30, "the scheduler badge to say it is up")
    b.get(f"/ui/hosts/{cluster.worker_names[0]}")
    assert b.text("h1").startswith(f"Host {cluster.worker_names[0]}")
    assert "maxmem" in b.text("#resources") and "slots" in b.text("#resources")
    b.screenshot(tmp_path / "host.png")
    assert _severe(b) == []


def test_a_submitted_job_appears_and_finishes_without_reloading_and_its_page_has_its_history(
        cluster, people, browser, tmp_path):
    b = browser
    log_in(b, people.token("me"))
    b.get(f"/ui/jobs?user={getpass.getuser()}")
    b.driver.execute_script("window.__xceMarker = 'same page';")
    jobid = people.submit("me", ["sleep", "2"])

    def state_in_table():
        states = b.texts(f'#jobs tr[data-jobid="{jobid}"] .job-state')
        return states[0] if states else None

    b.wait(lambda: state_in_table() in ("PEND", "RUN"), 30, f"job {jobid} to appear in the table")
    b.wait(lambda: state_in_table() == "DONE", 60, f"job {jobid} to show DONE")
    assert b.driver.execute_script("return window.__xceMarker") == "same page"  # never reloaded
    assert b.driver.execute_script("return performance.getEntriesByType('navigation').length") == 1
    b.screenshot(tmp_path / "jobs.png")

    b.wait(lambda: b.css(f'#jobs tr[data-jobid="{jobid}"] a').click() or True, 10, "a click on the job")
    b.wait(lambda: b.all("#history"), 30, "the job page")
    history = b.texts("#history tbody tr", "td")
    assert [h[2] for h in history] == ["PEND", "RUN", "DONE"]
    assert history[0][3] == "submitted" and history[1][3].startswith("dispatched to ")
    assert b.text("#job-command") == "sleep 2"
    assert b.text("#placement").split(" ")[0] in cluster.worker_names
    b.screenshot(tmp_path / "job.png")
    assert _severe(b) == []


def test_a_user_cannot_see_another_users_command(tmp_path):
    """On a multi-user controller (a personal cluster serves nobody else): carol's job as dave sees it."""
    (tmp_path / "xce.toml").write_text(CONFIG)
    ctl = start_controller(tmp_path / "state", config=str(tmp_path / "xce.toml"))
    b = None
    try:
        people = People(ctl.url, ctl.token("admin"), tmp_path)
        secret = "--password=hunter2-do-not-show"
        jobid = people.submit("carol", ["sh", "-c", "sleep 60", "job", secret], queue="night", priority=-5)
        b = Browser(ctl.url)
        log_in(b, people.token("dave"))
        b.get("/ui/jobs?user=carol")
        row = b.wait(lambda: b.texts(f'#jobs tr[data-jobid="{jobid}"]'), 30, "carol's job in dave's list")[0]
        assert "(private)" in row and "carol" in row
        assert secret not in b.driver.page_source and str(tmp_path) not in b.driver.page_source
        b.get(f"/ui/jobs/{jobid}")
        assert "another user's job" in b.text("#private-note")
        assert not b.all("#job-command") and not b.all(".actions")  # no command, no buttons
        assert secret not in b.driver.page_source

        b.css("form.who button").click()  # log out; carol logs in and sees her own command
        b.wait(lambda: b.all("#token"), 30, "the log-in page")
        log_in(b, people.token("carol"))
        b.get(f"/ui/jobs/{jobid}")
        assert secret in b.text("#job-command")
        only_the_controller(b)
    finally:
        if b is not None:
            b.close()
        ctl.stop()


def test_an_admin_suspends_resumes_and_kills_a_job_from_its_page(cluster, people, browser, tmp_path):
    jobid = people.submit("me", ["sleep", "300"])
    wait_for(lambda: people.job(jobid)["state"] == "RUN", 30, f"job {jobid} to run")
    b = browser
    log_in(b, people.token("admin"))
    b.get(f"/ui/jobs/{jobid}")
    assert b.text("#job-state") == "RUN"

    def press(action: str, then: str) -> None:
        b.wait(lambda: b.css(f"#action-{action}").click() or True, 10, f"a click on {action}")
        b.driver.switch_to.alert.accept()  # "Kill job N?"
        b.wait(lambda: b.text("#job-state") == then, 30, f"the page to show {then}")

    press("suspend", "USUSP")
    assert people.job(jobid)["state"] == "USUSP"
    press("resume", "RUN")
    press("kill", "EXIT")
    assert b.text("#job-reason") == "killed by admin"
    job = people.job(jobid)
    assert job["state"] == "EXIT" and job["reason"] == "killed by admin"
    assert [(h["to"], h["by"]) for h in job["history"]][-4:] == [
        ("RUN", "scheduler"), ("USUSP", "admin"), ("RUN", "admin"), ("EXIT", "admin")]
    b.screenshot(tmp_path / "killed.png")


def test_api_docs_and_redoc_render_from_the_controller_alone(cluster, browser):
    b = browser
    b.get("/docs")
    b.wait(lambda: "XCE controller" in b.text(".swagger-ui .info .title"), 60, "Swagger UI to render")
    b.wait(lambda: len(b.all(".opblock")) > 10, 30, "the operations to be listed")
    b.get("/redoc")
    b.wait(lambda: "XCE controller" in b.text("h1"), 60, "ReDoc to render")
    assert b.external_requests() == []
    assert f"{cluster.url}/docs/assets/redoc.standalone.js" in b.requested
    assert f"{cluster.url}/docs/assets/swagger-ui-bundle.js" in b.requested


def test_the_overview_fits_a_phone_screen(cluster, people, browser, tmp_path):
    b = browser
    b.resize(390, 844)
    log_in(b, people.token("me"))
    overflow = b.driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1  # wide tables scroll inside their box; the page itself never scrolls sideways
    assert b.css("#hosts").is_displayed() and b.css("nav").is_displayed()
    b.screenshot(tmp_path / "phone.png")


def _inside(b, element) -> bool:
    """Whether ``element`` is shown and lies across the window's width, not left or right of it."""
    rect = b.driver.execute_script("const r = arguments[0].getBoundingClientRect();"
                                   "return [r.left, r.right, r.width, window.innerWidth];", element)
    left, right, width, inner = rect
    return element.is_displayed() and width > 0 and left >= 0 and right <= inner + 1


def test_on_a_phone_the_jobs_list_shows_each_jobs_name_and_why_it_waits(cluster, people, browser, tmp_path):
    b = browser
    b.resize(390, 844)
    log_in(b, people.token("me"))
    jobid = people.submit("me", ["sleep", "1"], name="phone-fit", hold=True)
    b.get(f"/ui/jobs?user={getpass.getuser()}")
    row = f'#jobs tr[data-jobid="{jobid}"]'
    b.wait(lambda: "waiting" in b.text(f"{row} td.reason"), 30, f"job {jobid}'s waiting reason")
    for cell in ("td.name", "td.reason"):
        assert b.wait(lambda cell=cell: _inside(b, b.css(f"{row} {cell}")), 10, f"{cell} on screen")
    assert b.text(f"{row} td.name") == "phone-fit"
    label = b.driver.execute_script("return getComputedStyle(arguments[0], '::before').content", b.css(f"{row} td.name"))
    assert label == '"Name"'  # each cell shows its column's name beside it
    overflow = b.driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1
    b.screenshot(tmp_path / "phone-jobs.png")
    b.get(f"/ui/jobs/{jobid}")
    b.wait(lambda: b.all("#pend-reasons td.reason"), 30, "the job's pending reasons")
    assert _inside(b, b.css("#pend-reasons td.reason")) and "held" in b.text("#pend-reasons td.reason")
    b.screenshot(tmp_path / "phone-job.png")
    assert _severe(b) == []
