"""The store on SQLite and PostgreSQL alike: schema, migrations, reopen-and-resume, the event log."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from xce.controller.errors import Gone
from xce.controller.hosts import fleet
from xce.controller.jobs import submission
from xce.controller.sched import feed
from xce.controller.service import Controller, Settings
from xce.controller.store import engine as store_engine, migrate
from xce.controller.store.schema import jobs, metadata
from xce.controller.web.models import RegisterRequest, SubmitRequest
from xce.core import events as core_events
from xce.core.specs import JobSpec
from xce.protocol.actions import KillJob


def open_controller(state_dir, db_url, **kw) -> Controller:
    ctl = Controller(Settings(state_dir=state_dir, db=db_url, **kw))
    ctl.open()
    return ctl


def submit(ctl, user="ann", **kw):
    return submission.submit(ctl, user, SubmitRequest(command=["sleep", "1"], **kw))


def events_after(ctl, after=0, limit=10_000):
    body, _ = feed.read_events(ctl, after, limit)
    return json.loads(body)


def test_migrations_build_exactly_the_schema_and_are_idempotent(tmp_path, db_url):
    url = store_engine.normalize_url(db_url, tmp_path / "x.db")
    engine = store_engine.open_engine(url)
    try:
        migrate.upgrade(engine)
        migrate.upgrade(engine)  # a second start changes nothing
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
            head = ScriptDirectory.from_config(migrate.alembic_config()).get_current_head()
            assert head == "0013"  # the newest migration in the package: bump when adding one
            assert conn.exec_driver_sql("select version_num from alembic_version").scalar() == head
    finally:
        engine.dispose()


def test_sqlite_runs_in_wal_mode_with_normal_sync(tmp_path):
    ctl = open_controller(tmp_path, None)
    try:
        assert ctl.conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert ctl.conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
    finally:
        ctl.close()


def test_reopen_resumes_jobs_counters_log_and_hosts(tmp_path, db_url):
    ctl = open_controller(tmp_path, db_url)
    try:
        first = submit(ctl)
        arr = submit(ctl, array=5, tasks=2)
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 4, "maxmem": 8 << 30},
                                            load={"mem": 1 << 30, "r1m": 0.5}))
        seq_before = ctl.last_seq
        all_before = events_after(ctl)["events"]
    finally:
        ctl.close()

    ctl = open_controller(tmp_path, db_url)
    try:
        with ctl.tx() as conn:
            ids = [r[0] for r in conn.execute(sa.select(jobs.c.id).order_by(jobs.c.id))]
        assert ids == [first["jobid"], *arr["jobids"]] == list(range(1, 7))
        assert ctl.job(arr["jobids"][2])["array_index"] == 3  # indexes 1..N, as -J "name[1-N]"
        assert ctl.last_seq == seq_before  # no CONFIG_PUSH again: the configuration did not change
        assert events_after(ctl)["events"] == all_before
        assert ctl.hosts["h1"].resources["slots"] == 4 and ctl.hosts["h1"].load["r1m"] == 0.5
        nxt = submit(ctl)
        assert nxt["jobid"] == 7
        new = events_after(ctl, seq_before)["events"]
        assert [e["seq"] for e in new] == [seq_before + 1]
        assert new[0]["event"]["payload"]["jobs"][0]["jobid"] == 7
    finally:
        ctl.close()


def test_every_published_event_is_a_core_event(tmp_path, db_url):
    ctl = open_controller(tmp_path, db_url)
    try:
        submit(ctl, request="select[mem>1G]", requests={"mem": 2 << 30, "example.com/gpu": 1}, priority=3)
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 4, "type": "X86_64"}, load={"mem": 5}))
        page = events_after(ctl)
        types = [e["event"]["type"] for e in page["events"]]
        assert types == ["CONFIG_PUSH", "JOBS_PUSH", "WORKERS_PUSH", "RESVALS_FULL"]
        assert [e["seq"] for e in page["events"]] == [1, 2, 3, 4] and page["last_seq"] == 4
        # The configuration also carries the scheduler process's own cadence, which the core ignores.
        driver = page["events"][0]["event"]["payload"].pop("driver")
        assert driver == {"round_interval_s": 0.2, "max_round_interval_s": 5.0}
        for e in page["events"]:
            parsed = core_events.from_json(e["event"])
            # lossless: the rest is exactly the core's JSON form
            assert json.loads(json.dumps(parsed.to_json())) == e["event"]
        spec = JobSpec.from_json(page["events"][1]["event"]["payload"]["jobs"][0])
        assert spec.request == "select[mem>1G] rusage[mem=2G:example.com/gpu=1]"
        assert spec.priority == 3 and spec.state == "PEND" and spec.queue_time > 0
    finally:
        ctl.close()


def test_jobspec_json_matches_the_core_record(tmp_path):
    ctl = open_controller(tmp_path, None)
    try:
        res = submit(ctl, tasks=3)
        row = ctl.job(res["jobid"])
        row["placement"] = json.dumps([["h1", 2], ["h2", 1]])
        assert submission.jobspec_json(row) == JobSpec.from_json(submission.jobspec_json(row)).to_json()
    finally:
        ctl.close()


def test_a_failed_transaction_leaves_no_trace_and_no_hole(tmp_path, db_url):
    ctl = open_controller(tmp_path, db_url)
    try:
        submit(ctl)
        seq, nxt = ctl.last_seq, ctl.next_job
        with pytest.raises(RuntimeError):
            with ctl.tx():
                ctl.alloc_jobids(10)
                ctl.publish(core_events.JobUpdate(ts=1, jobid=1, priority=1))
                raise RuntimeError("boom")
        assert (ctl.last_seq, ctl.next_job) == (seq, nxt)
        assert submit(ctl)["jobid"] == nxt
        assert [e["seq"] for e in events_after(ctl)["events"]] == list(range(1, seq + 2))
    finally:
        ctl.close()


def test_array_is_one_bulk_insert_chunked_into_pushes(tmp_path, db_url):
    ctl = open_controller(tmp_path, db_url)
    try:
        res = submit(ctl, array=2500)
        assert res["jobids"] == list(range(1, 2501))
        pushes = [e["event"] for e in events_after(ctl)["events"] if e["event"]["type"] == "JOBS_PUSH"]
        assert [p["payload"]["njobs"] for p in pushes] == [1000, 1000, 500]
        assert [j["jobid"] for p in pushes for j in p["payload"]["jobs"]] == res["jobids"]
    finally:
        ctl.close()


def test_pruning_bounds_the_log_and_old_cursors_get_gone(tmp_path, db_url):
    ctl = open_controller(tmp_path, db_url, event_retention=5)
    try:
        for _ in range(12):
            submit(ctl)
        last = ctl.last_seq
        feed.prune(ctl)
        page = events_after(ctl, last - 5)
        assert [e["seq"] for e in page["events"]] == list(range(last - 4, last + 1))
        with pytest.raises(Gone, match="pruned"):
            feed.read_events(ctl, 0, 10)
        with pytest.raises(Gone, match="beyond the newest"):
            feed.read_events(ctl, last + 10, 10)
    finally:
        ctl.close()


def test_a_second_controller_cannot_take_the_same_state_dir(tmp_path):
    ctl = open_controller(tmp_path, None)
    try:
        with pytest.raises(RuntimeError, match="another controller"):
            open_controller(tmp_path, None)
    finally:
        ctl.close()


def test_action_ids_are_never_reused_after_acknowledgement_and_restart(tmp_path, db_url):
    ctl = open_controller(tmp_path, db_url)
    try:
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 1}, running=[]))
        with ctl.tx():
            for jobid in (1, 2, 3):
                ctl.queue("h1", KillJob(jobid=jobid))
        seen = fleet.fetch_actions(ctl, "h1", 0, 10)["last_id"]
        assert fleet.fetch_actions(ctl, "h1", seen, 10)["actions"] == []  # acknowledged: deleted
    finally:
        ctl.close()
    ctl = open_controller(tmp_path, db_url)
    try:
        with ctl.tx():
            new_id = ctl.queue("h1", KillJob(jobid=4))
        assert new_id > seen
        # a worker that kept its cursor across the controller restart still gets the new action
        assert [a["id"] for a in fleet.fetch_actions(ctl, "h1", seen, 10)["actions"]] == [new_id]
    finally:
        ctl.close()
