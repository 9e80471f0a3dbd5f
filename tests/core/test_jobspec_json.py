"""A job read back from its JSON form (a recording's JOBS_PUSH, the controller's feed) is the job that
was submitted, field for field, however the JSON spells it; what is malformed is refused as before."""

import pytest

from xce.core.specs import JobSpec

SPECS = [
    JobSpec(1, "ann", "normal"),
    JobSpec(2, "bob", "high", project="p", job_type="interactive", priority=7, queue_time=123, request="rusage[mem=1G]",
            tasks=4, state="RUN", placement=(("h1", 3), ("h2", 1)), start_time=99, run_limit=600, exclusive=True),
]


@pytest.mark.parametrize("spec", SPECS)
def test_the_json_form_reads_back_as_the_same_job(spec):
    back = JobSpec.from_json(spec.to_json())
    assert back == spec and hash(back) == hash(spec) and repr(back) == repr(spec)


def test_omitted_fields_take_their_defaults_and_placements_become_tuples():
    back = JobSpec.from_json({"jobid": 3, "user": "cy", "queue": "q", "placement": [["h1", "2"]]})
    assert back == JobSpec(3, "cy", "q", placement=(("h1", 2),))
    assert JobSpec.from_json({"jobid": 4, "user": "d", "queue": "q", "placement": (("h", 1),)}).placement == (("h", 1),)


@pytest.mark.parametrize("obj, error, text", [
    ({"jobid": 1, "user": "u", "queue": "q", "colour": "red"}, ValueError, "unknown field(s) colour"),
    ({"jobid": 1, "user": "u"}, TypeError, "queue"),
    ({"jobid": 1, "user": "u", "queue": "q", "placement": None}, TypeError, "not iterable"),
])
def test_malformed_job_json_is_refused_naming_what_is_wrong(obj, error, text):
    with pytest.raises(error, match=text.replace("(", r"\(").replace(")", r"\)")):
        JobSpec.from_json(obj)
