"""Job names of any characters through the ``xce`` commands, ``-J`` patterns, and how a job ended (``-l``)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.integration

NAMES = ["fit (v2)", "sweep [a] x", "a:b,c*d", "[bold]red", "50% done"]


def submitted(cli, *args: str) -> int:
    r = cli.xce("submit", *args)
    assert r.code == 0, r.err
    return int(re.match(r"Job <(\d+)>", r.out).group(1))


def columns(out: str) -> list[dict[str, str]]:
    """A plain-text table read by its header's column starts (cells may hold spaces)."""
    header, *rows = out.splitlines()
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    names = header.split()
    return [{n: row[a:b].strip() for n, a, b in zip(names, starts, starts[1:] + [None])} for row in rows]


def test_names_with_spaces_and_brackets_keep_their_columns_and_name_their_jobs(cli):
    ids = {name: submitted(cli, "-J", name, "--", "sleep", "30") for name in NAMES}
    r = cli.xce("jobs", "-o", "jobid name stat queue", *map(str, ids.values()))
    assert r.code == 0, r.err
    assert [(row["JOBID"], row["JOB_NAME"], row["STAT"], row["QUEUE"]) for row in columns(r.out)] == [
        (str(j), n, "PEND", "normal") for n, j in ids.items()]
    r = cli.xce("kill", "fit (v2)", "sweep [a] x")
    assert (r.code, r.out) == (0, f"Job <{ids['fit (v2)']}> is killed.\nJob <{ids['sweep [a] x']}> is killed.\n")
    r = cli.xce("jobs", "-l", "fit (v2)")
    assert "Job Name <fit (v2)>" in r.out and "\nEnd: KILLED (by alice)\n" in r.out, r.out


def test_star_in_dash_j_is_a_wildcard_for_listing_and_killing(cli):
    ids = {n: submitted(cli, "-J", n, "--", "sleep", "30") for n in ("tmp-1", "tmp-22", "TMP-3", "keep tmp")}
    listed = cli.xce("jobs", "--json", "-J", "tmp-*").json()["jobs"]
    assert [j["jobid"] for j in listed] == [ids["tmp-1"], ids["tmp-22"]]
    r = cli.xce("kill", "-J", "*tmp*")
    assert r.code == 0, r.err
    assert sorted(int(x) for x in re.findall(r"Job <(\d+)> is killed", r.out)) == sorted(
        [ids["tmp-1"], ids["tmp-22"], ids["keep tmp"]])
    left = {j["jobid"] for j in cli.xce("jobs", "--json", "-J", "*").json()["jobs"]}
    assert ids["TMP-3"] in left and not left & {ids["tmp-1"], ids["tmp-22"], ids["keep tmp"]}


def test_a_trailing_bracket_makes_an_array_and_quotes_name_a_job_in_a_dependency(cli):
    array = submitted(cli, "-J", "my sweep (b)[1-2]", "--", "true")
    jobs = cli.xce("jobs", "--json", "my sweep (b)").json()["jobs"]
    assert [(j["array_id"], j["array_index"], j["name"]) for j in jobs] == [
        (array, 1, "my sweep (b)"), (array, 2, "my sweep (b)")]
    assert [j["array_index"] for j in cli.xce("jobs", "--json", f"{array}_2").json()["jobs"]] == [2]
    r = cli.xce("submit", "-w", "done(my sweep (b))", "--", "true")
    assert r.code == 1 and 'written in double quotes: done("my job")' in r.err, r.err
    then = submitted(cli, "-w", 'done("my sweep (b)[2]")', "--", "true")
    (reason,) = cli.xce("jobs", "-l", "--json", str(then)).json()["jobs"][0]["pend_reasons"]
    assert f"(done({array}[2]))" in reason["text"]
