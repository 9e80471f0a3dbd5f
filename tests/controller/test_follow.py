"""The client side of several controllers: which address a client tries, when, and when it gives up.

``Leader.exchange`` takes the exchange itself as a function of the base URL, so its decisions are
tested here with plain functions standing for controllers; talking to real controllers through it
is tested in test_controller_leadership.py and the end-to-end HA tests.
"""

from __future__ import annotations

import time

import pytest

from xce.client.follow import LEADER_HEADER, Leader, NoLeader
from xce.client.urls import parse_urls


class Down(OSError):
    pass


def cluster(answers: dict[str, object]):
    """A function answering like controllers would: a transport error, a follower's redirect, or 200."""
    calls: list[str] = []

    def send(url: str):
        calls.append(url)
        a = answers[url]
        if a == "down":
            raise Down(f"{url} refused")
        if isinstance(a, tuple):  # (status, leader hint)
            return a[0], {LEADER_HEADER: a[1]}, None
        return 200, {}, a

    return send, calls


def test_parse_urls_checks_each_address():
    assert parse_urls(" http://a:1/, https://b:2 ,") == ["http://a:1", "https://b:2"]
    for bad, msg in (("", "empty"), ("http://a:1,ftp://b", "'ftp://b'"), ("http://a:x", "bad port"),
                     ("a:1", "expected http://HOST:PORT")):
        with pytest.raises(ValueError, match=msg):
            parse_urls(bad)


def test_a_follower_sends_the_client_to_the_leader_and_it_stays_there():
    send, calls = cluster({"http://a": (307, "http://b"), "http://b": "ok"})
    leader = Leader(["http://a", "http://b"])
    assert leader.exchange(send, (Down,)) == "ok"
    assert leader.exchange(send, (Down,)) == "ok"
    assert calls == ["http://a", "http://b", "http://b"]


def test_a_leader_named_by_a_follower_is_followed_even_if_not_listed():
    send, calls = cluster({"http://a": (307, "http://c"), "http://c": "ok"})
    leader = Leader(["http://a"])  # one address, no patience: following a redirect is not a failure
    assert leader.exchange(send, (Down,)) == "ok" and leader.urls == ["http://a", "http://c"]


def test_dead_addresses_are_skipped_and_one_address_fails_at_once():
    send, calls = cluster({"http://a": "down", "http://b": "ok"})
    assert Leader(["http://a", "http://b"]).exchange(send, (Down,)) == "ok"
    send, calls = cluster({"http://a": "down"})
    started = time.monotonic()
    with pytest.raises(Down):
        Leader(["http://a"]).exchange(send, (Down,))
    assert calls == ["http://a"] and time.monotonic() - started < 0.1


def test_during_a_takeover_the_client_waits_then_gives_up_with_the_reason():
    send, calls = cluster({"http://a": "down", "http://b": (503, "")})
    started = time.monotonic()
    with pytest.raises(NoLeader, match="no controller leads"):
        Leader(["http://a", "http://b"], patience=0.5).exchange(send, (Down,))
    took = time.monotonic() - started
    assert 0.5 <= took < 1.5
    assert set(calls) == {"http://a", "http://b"} and 3 <= len(calls) <= 12  # paused between rounds, no busy loop


def test_other_answers_are_the_answer_whatever_their_status():
    send, _ = cluster({"http://a": "ok"})
    seen = []

    def refusing(url):
        seen.append(url)
        return 404, {}, "not found"

    assert Leader(["http://a", "http://b"]).exchange(refusing, (Down,)) == "not found" and seen == ["http://a"]
    # A 503 without the header is not a follower's: it is passed on, not retried.
    assert Leader(["http://a", "http://b"]).exchange(lambda u: (503, {}, "busy"), (Down,)) == "busy"
