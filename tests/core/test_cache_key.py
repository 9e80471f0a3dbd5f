"""The unsatisfiable cache is keyed on ``{select, rusage, user, queue, project}`` (Req 7 AC 1,
issue 24): a refusal proven for one user, queue or project is reused only for jobs sharing all
three, and the parsed request (tasks and shape included) stands for select and rusage."""

from xce.testing import Harness, make_host, make_job, queue


def proofs(decisions):
    return [(d.jobid, d.reasons[0].proven_by) for d in decisions if d.OP == "PEND"]


def cluster(*queues):
    h = Harness(queues=queues or [queue("normal")])
    h.hosts(make_host("h1").slots(4).mem("8G"))
    return h


def test_the_same_user_queue_and_project_reuse_the_proof():
    h = cluster()
    h.submit(make_job(1).user("ann").rusage("mem=16G"), make_job(2).user("ann").rusage("mem=16G"))
    assert proofs(h.round_decisions()) == [(1, None), (2, 1)]


def test_another_user_is_not_refused_on_someone_elses_proof():
    h = cluster()
    h.submit(make_job(1).user("ann").rusage("mem=16G"), make_job(2).user("bob").rusage("mem=16G"),
             make_job(3).user("bob").rusage("mem=16G"))
    assert proofs(h.round_decisions()) == [(1, None), (2, None), (3, 2)]


def test_another_project_or_queue_gets_its_own_attempt():
    h = cluster(queue("normal"), queue("other"))
    h.submit(make_job(1).rusage("mem=16G"), make_job(2).project("physics").rusage("mem=16G"),
             make_job(3).queue("other").rusage("mem=16G"), make_job(4).queue("other").rusage("mem=16G"))
    assert proofs(h.round_decisions()) == [(1, None), (2, None), (3, None), (4, 3)]


def test_a_job_moved_to_another_project_is_keyed_on_its_new_project():
    h = cluster()
    h.submit(make_job(9).rusage("mem=1G"))
    h.round()
    h.submit(make_job(1).rusage("mem=16G"), make_job(2).rusage("mem=16G"),
             make_job(3).project("physics").rusage("mem=16G"))
    assert proofs(h.round_decisions()) == [(1, None), (2, 1), (3, None)]
    h.update(2, project="physics")
    h.state(9, "DONE")  # a release: all three are tried again
    assert proofs(h.round_decisions()) == [(1, None), (2, None), (3, 2)]


def test_the_explanation_is_shared_across_owners_until_a_dispatch_changes_the_cluster():
    h = cluster()
    h.submit(make_job(1).user("ann").rusage("mem=16G"), make_job(2).user("bob").rusage("mem=16G"),
             make_job(3).user("carl").rusage("mem=4G"), make_job(4).user("dan").rusage("mem=16G"))
    out = h.round_decisions()
    pend = {d.jobid: d.reasons[0] for d in out if d.OP == "PEND"}
    assert [d.jobid for d in out if d.OP == "DISPATCH"] == [3]
    assert pend[1] == pend[2] and pend[1].short == 8 << 30  # same cluster: the same words
    assert pend[4].short == 12 << 30  # job 3 took 4G in between: worked out afresh
