"""Requests to the controller for the LSF programs: the address and token as ``xce`` finds them
(:func:`xce.cli.client.connect`), failures as one LSF-style line and exit 255, never a traceback."""

from __future__ import annotations

from xce.compat.lsf._args import Failed

#: What LSF prints when mbatchd cannot be reached; XCE's reason follows on the next line.
DOWN = "LSF is down. Please wait ..."


def connect():
    """The controller's client; a controller that does not answer yet (restarting) is retried, said
    once as LSF says it while mbatchd is away."""
    import sys

    from xce.cli.client import connect as xce_connect

    client = xce_connect()
    client.on_retry = lambda why: print(DOWN, file=sys.stderr, flush=True)
    return client


def problems(exc) -> list[str]:
    """The controller's refusal as lines (its field errors one per line)."""
    from xce.cli.client import describe

    return describe(exc)


def request(client, method: str, path: str, body=None, params: dict | None = None, *, what: str = ""):
    """The decoded answer; :class:`Failed` with the controller's words (after ``what``) otherwise."""
    from xce.cli.client import ApiError, Unreachable

    try:
        if method == "GET":
            return client.request("GET", path, params=params)
        return client.request(method, path, body=body if body is not None else {})
    except Unreachable as exc:
        raise Failed(f"{DOWN}\n{exc}") from None
    except ApiError as exc:
        lines = problems(exc)
        raise Failed("\n".join(f"{what}{line}" for line in lines) or f"{what}HTTP {exc.status}") from None


def refusal(client, method: str, path: str, body=None, params: dict | None = None):
    """``(answer, None)`` or ``(None, (status, lines))`` for a refusal the caller words itself."""
    from xce.cli.client import ApiError, Unreachable

    try:
        return client.request(method, path, body=body, params=params), None
    except Unreachable as exc:
        raise Failed(f"{DOWN}\n{exc}") from None
    except ApiError as exc:
        return None, (exc.status, problems(exc))
