"""The dashboard over plain HTTP against a real controller (no scheduler: jobs stay pending):
log-in rules, the same permissions and privacy as the API, refused forms, bad parameters, and
pages that reference nothing outside the controller."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

import httpx
import pytest

from xce.client.launch import start_controller

pytestmark = pytest.mark.integration

CONFIG = """
cluster_name = "uihttp"
admins = ["root", "boss"]
[queues.normal]
[queues.other]
"""


@pytest.fixture(scope="module")
def ctl(tmp_path_factory):
    sd = tmp_path_factory.mktemp("uihttp")
    (sd / "xce.toml").write_text(CONFIG)
    c = start_controller(sd / "state", config=str(sd / "xce.toml"))
    yield c
    c.stop()


def token(ctl, name: str) -> str:
    if name == "admin":  # an administrator's own token: the service token's submissions would be root's
        return ctl.user_token("alice", admin=True)
    return ctl.user_token(name)


def session(ctl, name: str) -> httpx.Client:
    """A browser-like client logged in to the dashboard as ``name``."""
    c = httpx.Client(base_url=ctl.url, timeout=30)
    r = c.post("/ui/login", data={"token": token(ctl, name), "next": "/ui/jobs"})
    assert r.status_code == 303 and r.headers["location"] == "/ui/jobs", r.text
    return c


def api(ctl, name: str, method: str, path: str, body=None) -> httpx.Response:
    return httpx.request(method, ctl.url + path, json=body, headers={"Authorization": f"Bearer {token(ctl, name)}"})


def submit(ctl, name: str, command: list[str], **extra) -> int:
    r = api(ctl, name, "POST", "/v1/jobs", {"command": command, **extra})
    r.raise_for_status()
    return r.json()["jobid"]


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([0-9a-f]+)"', html).group(1)


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.inline_scripts = 0
        self.inline_styles = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href", "action"):
            if a.get(key):
                self.refs.append(a[key])
        if tag == "script" and not a.get("src"):
            self.inline_scripts += 1
        if "style" in a or tag == "style":
            self.inline_styles += 1


def test_every_page_needs_a_session_and_slash_leads_there(ctl):
    c = httpx.Client(base_url=ctl.url, timeout=30)
    assert c.get("/").headers["location"] == "/ui/"
    for path in ("/ui/", "/ui/jobs", "/ui/jobs/1", "/ui/hosts/h1", "/ui/drift"):
        r = c.get(path)
        assert r.status_code == 303 and r.headers["location"].startswith("/ui/login?next="), path
        assert c.get(path, headers={"X-XCE-Fragment": "1"}).status_code == 401  # a refresh learns it is logged out
    assert c.post("/ui/jobs/1/kill", data={"csrf": "x"}).status_code == 303


def test_only_people_log_in_and_only_with_a_valid_token(ctl):
    c = httpx.Client(base_url=ctl.url, timeout=30)
    for role in ("worker", "scheduler", "metrics"):
        r = c.post("/ui/login", data={"token": ctl.token(role)})
        assert r.status_code == 401 and f"a {role} token cannot log in to the dashboard" in r.text
        assert "set-cookie" not in r.headers
    r = c.post("/ui/login", data={"token": ctl.token("admin")[:-3] + "AAA"})
    assert r.status_code == 401 and "not valid for this cluster" in r.text
    # the cookie is the session: HttpOnly, SameSite=Strict, no expiry (ends with the browser session)
    r = c.post("/ui/login", data={"token": token(ctl, "ann"), "next": "https://elsewhere.example/phish"})
    assert r.headers["location"] == "/ui/"  # never redirected off the dashboard
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/ui" in cookie
    assert "expires" not in cookie and "max-age" not in cookie
    overview = c.get("/ui/")
    assert overview.status_code == 200
    assert c.post("/ui/logout").status_code == 403  # a log-out from another site is refused too
    r = c.post("/ui/logout", data={"csrf": csrf_of(overview.text)})
    assert r.status_code == 303 and 'xce_session=""' in r.headers["set-cookie"]
    c.cookies.clear()
    assert c.get("/ui/").status_code == 303


def test_a_user_in_the_admins_list_is_an_admin_on_the_dashboard_too(ctl):
    jobid = submit(ctl, "ann", ["sleep", "1"])
    boss = session(ctl, "boss")
    page = boss.get(f"/ui/jobs/{jobid}").text
    assert "<em>admin</em>" in page and 'id="action-kill"' in page and 'id="job-command"' in page


def test_another_users_job_is_listed_without_command_per_the_privacy_rule(ctl, tmp_path):
    secret = "s3cret-argument"
    jobid = submit(ctl, "ann", ["sleep", "100", secret], cwd="/home/ann/private", stdout="/home/ann/out")
    bob = session(ctl, "bob")
    listing = bob.get("/ui/jobs", params={"user": "ann"}).text
    assert f'data-jobid="{jobid}"' in listing and "(private)" in listing and secret not in listing
    page = bob.get(f"/ui/jobs/{jobid}").text
    assert secret not in page and "/home/ann" not in page and "another user's job" in page
    # the API applies the same rule through the same function
    row = [j for j in api(ctl, "bob", "GET", "/v1/jobs?user=all").json()["jobs"] if j["jobid"] == jobid][0]
    assert row["command"] is None and row["user"] == "ann"
    assert api(ctl, "ann", "GET", "/v1/jobs").json()["jobs"][-1]["command"][-1] == secret
    assert [j for j in api(ctl, "admin", "GET", "/v1/jobs?user=all").json()["jobs"]
            if j["jobid"] == jobid][0]["command"][-1] == secret
    assert secret in session(ctl, "admin").get("/ui/jobs").text


def test_show_all_jobs_makes_commands_public(tmp_path):
    (tmp_path / "xce.toml").write_text("[privacy]\nshow_all_jobs = true\n")
    c = start_controller(tmp_path / "state", config=str(tmp_path / "xce.toml"))
    try:
        submit(c, "ann", ["echo", "open-secret"])
        assert "open-secret" in session(c, "bob").get("/ui/jobs").text
        assert api(c, "bob", "GET", "/v1/jobs?user=all").json()["jobs"][0]["command"] == ["echo", "open-secret"]
    finally:
        c.stop()


def test_actions_need_the_forms_csrf_token_and_the_apis_permission(ctl):
    jobid = submit(ctl, "carl", ["sleep", "100"])
    carl = session(ctl, "carl")
    page = carl.get(f"/ui/jobs/{jobid}").text
    assert 'id="action-kill"' in page
    # a form posted from elsewhere (no or a wrong token) changes nothing
    for data in ({}, {"csrf": "0" * 32}, {"csrf": csrf_of(session(ctl, "mallory").get("/ui/").text)},
                 {"csrf": csrf_of(page)[:-1]}):
        r = carl.post(f"/ui/jobs/{jobid}/kill", data=data)
        assert r.status_code == 403 and "did not come from this dashboard" in r.text
    assert api(ctl, "carl", "GET", f"/v1/jobs/{jobid}").json()["state"] == "PEND"
    # another user, with a valid form token of their own, is refused as by the API
    mallory = session(ctl, "mallory")
    r = mallory.post(f"/ui/jobs/{jobid}/kill", data={"csrf": csrf_of(mallory.get("/ui/").text)})
    assert r.status_code == 403 and f"cannot kill job {jobid}: it belongs to carl" in r.text
    assert api(ctl, "carl", "GET", f"/v1/jobs/{jobid}").json()["state"] == "PEND"
    # a state the job is not in: 409 with the state machine's sentence
    r = carl.post(f"/ui/jobs/{jobid}/suspend", data={"csrf": csrf_of(page)})
    assert r.status_code == 409 and "cannot suspend" in r.text
    # the owner kills it
    r = carl.post(f"/ui/jobs/{jobid}/kill", data={"csrf": csrf_of(page)})
    assert r.status_code == 303 and r.headers["location"] == f"/ui/jobs/{jobid}"
    job = api(ctl, "carl", "GET", f"/v1/jobs/{jobid}").json()
    assert job["state"] == "EXIT" and job["reason"] == "killed by carl"
    assert "killed by carl" in carl.get(f"/ui/jobs/{jobid}").text


def test_bad_parameters_get_one_line_not_a_traceback(ctl):
    c = session(ctl, "dora")
    cases = {
        "/ui/jobs?state=RUNNING": "state: unknown state &#39;RUNNING&#39;",
        "/ui/jobs?queue=nope": "queue: unknown queue &#39;nope&#39;",
        "/ui/jobs?sort=password": "sort: cannot sort on &#39;password&#39;",
        "/ui/jobs?dir=sideways": "dir: expected asc or desc",
        "/ui/jobs?page=0": "page: expected a page number from 1",
        "/ui/jobs?page=abc": "page and size must be whole numbers",
        "/ui/jobs?size=7": "size: expected one of 25, 50, 100, 200",
        "/ui/drift?jobType=" + "x" * 129: "jobType: expected a job type name",
    }
    for path, message in cases.items():
        r = c.get(path)
        assert r.status_code == 400 and message in r.text, (path, r.status_code)
        assert "Traceback" not in r.text
    for path in ("/ui/jobs/abc", "/ui/jobs/99999999999999999999", "/ui/jobs/424242", "/ui/hosts/nohost"):
        r = c.get(path)
        assert r.status_code == 404, path
    for path in ("/ui/jobs?user=a%00b", "/ui/drift?jobType=a%00b"):  # refused before any page code runs
        assert c.get(path).status_code == 422, path
    assert c.post("/ui/jobs/1/explode", data={"csrf": csrf_of(c.get("/ui/").text)}).status_code == 404


def test_jobs_are_paged_filtered_and_sorted_in_the_store(ctl):
    first = api(ctl, "erin", "POST", "/v1/jobs", {"command": ["true"], "array": 60, "queue": "other"}).json()["jobids"][0]
    api(ctl, "admin", "PATCH", f"/v1/jobs/{first + 7}", {"priority": 99})
    c = session(ctl, "erin")
    ids = lambda html: [int(x) for x in re.findall(r'<tr data-jobid="(\d+)"', html)]  # noqa: E731
    page1 = c.get("/ui/jobs", params={"user": "erin", "queue": "other"}).text
    assert ids(page1) == list(range(first + 59, first + 9, -1)) and "60 jobs" in page1 and "page 1 of 2" in page1
    page2 = c.get("/ui/jobs", params={"user": "erin", "queue": "other", "page": 2}).text
    assert ids(page2) == list(range(first + 9, first - 1, -1))
    by_priority = c.get("/ui/jobs", params={"user": "erin", "sort": "priority", "size": 25}).text
    assert ids(by_priority)[0] == first + 7
    ascending = c.get("/ui/jobs", params={"user": "erin", "sort": "id", "dir": "asc", "size": 25}).text
    assert ids(ascending)[:3] == [first, first + 1, first + 2]
    # pending jobs no round has looked at yet are their own category
    assert "waiting" not in page1
    assert f'data-jobid="{first}"' in c.get("/ui/jobs", params={"user": "erin", "state": "PEND",
                                                                  "category": "unscheduled", "sort": "id",
                                                                  "dir": "asc"}).text


def test_a_refresh_returns_the_live_part_only_and_pages_reference_nothing_outside(ctl):
    submit(ctl, "fred", ["true"])
    c = session(ctl, "fred")
    for path in ("/ui/", "/ui/jobs", "/ui/jobs/1", "/ui/drift", "/ui/login"):
        full = c.get(path)
        assert full.status_code == 200, path
        assert "default-src 'none'" in full.headers["content-security-policy"]
        assert full.headers["x-frame-options"] == "DENY" and full.headers["cache-control"] == "no-store"
        refs = _Refs()
        refs.feed(full.text)
        assert refs.inline_scripts == 0 and refs.inline_styles == 0, path  # the policy would block them
        for ref in refs.refs:
            parts = urlsplit(ref)
            assert not parts.scheme and not parts.netloc, (path, ref)
        for asset in [r for r in refs.refs if r.startswith("/ui/static/")]:
            assert c.get(asset).status_code == 200, asset
        fragment = c.get(path, headers={"X-XCE-Fragment": "1"}).text
        assert "<html" not in fragment and "<header" not in fragment
        live = full.text.split('<main id="live"', 1)[1].split("</main>", 1)[0]
        ids = re.findall(r' id="([^"]+)"', live)
        assert ids and re.findall(r' id="([^"]+)"', fragment) == ids, path


def test_a_revoked_token_ends_the_session_at_the_next_request(ctl):
    admin = {"Authorization": f"Bearer {ctl.token('admin')}"}
    issued = httpx.post(f"{ctl.url}/v1/admin/tokens", json={"name": "rita"}, headers=admin).json()
    c = httpx.Client(base_url=ctl.url, timeout=30)
    assert c.post("/ui/login", data={"token": issued["token"]}).status_code == 303
    assert c.get("/ui/").status_code == 200
    assert httpx.post(f"{ctl.url}/v1/admin/tokens/{issued['id']}/revoke", headers=admin).status_code == 200
    assert c.get("/ui/", headers={"X-XCE-Fragment": "1"}).status_code == 401  # the page's refresh stops
    r = c.get("/ui/")
    assert r.status_code == 303 and r.headers["location"].startswith("/ui/login")
    r = c.post("/ui/login", data={"token": issued["token"]})
    assert r.status_code == 401 and f"token {issued['id']} was revoked" in r.text


def test_the_page_of_a_job_the_controller_keeps_back_says_why_it_waits(ctl):
    """Held, begin-time, dependency and array-limited jobs carry the controller's own pend reason,
    which names no resource: their pages answered 500 (issue 36)."""
    first = submit(ctl, "admin", ["true"])
    held = submit(ctl, "admin", ["true"], hold=True)
    later = submit(ctl, "admin", ["true"], begin_time=2_000_000_000 * 10**9)
    after = submit(ctl, "admin", ["true"], depend=f"done({first})")
    array = api(ctl, "admin", "POST", "/v1/jobs", {"command": ["true"], "array": "1-3%1"}).json()
    c = session(ctl, "admin")
    expected = {held: "held by", later: "will not start before", after: f"done({first})",
                array["jobids"][-1]: "runs at most 1 element"}
    for jobid, why in expected.items():
        r = c.get(f"/ui/jobs/{jobid}")
        assert r.status_code == 200, (jobid, r.text[:300])
        assert why in r.text.split('id="pend-reasons"', 1)[1], jobid


def test_a_jobs_page_shows_what_it_used(ctl):
    """CPU time to the millisecond (user and system), memory peak, average and now, as the job's
    worker reported them (a worker and a scheduler played by the test)."""
    def as_role(role: str, path: str, body) -> None:
        r = httpx.post(ctl.url + path, json=body, headers={"Authorization": f"Bearer {ctl.token(role)}"})
        assert r.status_code == 200, r.text

    as_role("worker", "/v1/workers/register", {"name": "uiused", "resources": {"slots": 2}, "load": {}})
    jobid = submit(ctl, "admin", ["true"])
    as_role("scheduler", "/v1/sched/decisions", {"decisions": [{"id": "uiused-1", "ts": 1, "decision": {
        "op": "DISPATCH", "seq": 1, "jobid": jobid, "placement": [["uiused", 1]]}}]})
    mb = 1 << 20
    for rss, cpu in ((100 * mb, 400), (300 * mb, 950)):
        as_role("worker", "/v1/workers/uiused/load", {"load": {}, "usage": {str(jobid): {
            "memory_rss": rss, "mem_peak": 320 * mb, "cpu_ms": cpu, "cpu_user_ms": cpu - 50, "cpu_sys_ms": 50}}})
    page = session(ctl, "admin").get(f"/ui/jobs/{jobid}").text
    used = page.split('id="used"', 1)[1].split("</dl>", 1)[0]
    assert "0.950 s (user 0.900 s, system 0.050 s)" in used, used
    assert re.search(r"peak 320(\.0)? ?Mi?B?, average 200(\.0)? ?Mi?B?, now 300(\.0)? ?Mi?B?", used), used


class _Cells(HTMLParser):
    """The header cells of ``table#jobs`` and, per job row, each cell's data-label and text."""

    def __init__(self) -> None:
        super().__init__()
        self.headers: list[str] = []
        self.rows: dict[str, list[list[str]]] = {}
        self._where: str | None = None
        self._row: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "th":
            self._where = "th"
            self.headers.append("")
        elif tag == "tr" and a.get("data-jobid"):
            self._row = a["data-jobid"]
            self.rows[self._row] = []
        elif tag == "td" and self._row:
            self._where = "td"
            self.rows[self._row].append([a.get("data-label") or "", ""])

    def handle_endtag(self, tag):
        if tag in ("th", "td"):
            self._where = None
        elif tag == "tr":
            self._row = None

    def handle_data(self, data):
        if self._where == "th":
            self.headers[-1] += data.strip(" \n▲▼")  # the sorted column's arrow
        elif self._where == "td":
            self.rows[self._row][-1][1] += data.strip()


def test_the_jobs_list_names_each_job_and_labels_every_cell_for_a_phone(ctl):
    """A Name column; and every cell says its column, which a phone's layout shows beside it (the
    stylesheet lays the rows out as cards there, the waiting reason on a line of its own)."""
    r = api(ctl, "ann", "POST", "/v1/jobs", {"command": ["sleep", "100"], "name": "nightly-fit"})
    r.raise_for_status()
    jobid = r.json()["jobid"]
    cells = _Cells()
    cells.feed(session(ctl, "ann").get("/ui/jobs", params={"user": "ann"}).text)
    assert cells.headers[:2] == ["Job", "Name"] and cells.headers[-1] == "Reason"
    row = cells.rows[str(jobid)]
    assert [label for label, _ in row] == cells.headers  # each cell labelled with its own column
    shown = dict(row)
    assert shown["Name"] == "nightly-fit" and shown["Job"] == str(jobid)
    assert shown["Reason"] == "submitted", shown  # no scheduler here: it waits, as submitted
    css = httpx.get(f"{ctl.url}/ui/static/ui.css").text
    phone = css[css.rindex("@media (max-width: 640px)"):]
    assert "table.stack" in phone and "attr(data-label)" in phone
