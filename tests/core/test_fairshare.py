"""``fairshare``: usage (decayed slot-seconds) converges to the configured shares."""

from __future__ import annotations

from xce.testing import Harness, make_host, make_job, queue

NS = 1_000_000_000


def run_two_users(shares, rounds=300, slots=4):
    h = Harness(queues=[queue("normal", shares=tuple(sorted(shares.items())), fairshare_half_life=600,
                              reservations=0)], picker="fairshare")
    h.hosts(*[make_host(f"h{i}") for i in range(slots)])
    next_id = 1
    pending = {"alice": 0, "bob": 0}
    running: dict[int, tuple[str, int]] = {}
    used = {"alice": 0, "bob": 0}
    for step in range(rounds):
        t = 100 + step * 10
        h.ts = t * NS - NS
        for jobid, (_user, end) in list(running.items()):
            if end <= t:
                h.state(jobid, "DONE")
                del running[jobid]
        batch = []
        for user in ("alice", "bob"):  # both users always have more work than the cluster takes
            while pending[user] < 8:
                batch.append(make_job(next_id).user(user).limit(10))
                next_id += 1
                pending[user] += 1
        if batch:
            h.submit(*batch)
        for d in h.round_decisions():
            if type(d).__name__ == "Dispatch":
                user = h.core.jobs[d.jobid].user
                pending[user] -= 1
                running[d.jobid] = (user, t + 10)
                if step >= rounds // 2:
                    used[user] += 10
    return used, h


def test_usage_converges_to_the_configured_shares():
    used, h = run_two_users({"alice": 3, "bob": 1})
    share = used["alice"] / (used["alice"] + used["bob"])
    assert abs(share - 0.75) < 0.05, used
    # equal shares: equal use
    used, _ = run_two_users({})
    assert abs(used["alice"] / (used["alice"] + used["bob"]) - 0.5) < 0.05, used


def test_the_user_below_its_share_goes_first_and_usage_survives_a_snapshot():
    import io

    from xce.core import SchedulerCore

    used, h = run_two_users({"alice": 1, "bob": 1}, rounds=20)
    picker = h.core.picker
    assert picker.factor("normal", "alice") > 0 and picker.factor("normal", "bob") > 0
    saved = io.StringIO()
    h.core.save_snapshot(saved)
    again = SchedulerCore(lambda d: None)
    again.load_snapshot(io.StringIO(saved.getvalue()))
    assert again.picker.usage == picker.usage
