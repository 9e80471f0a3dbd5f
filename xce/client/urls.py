"""A controller's address, read one way everywhere: the services' options, ``$XCE_URL``, the state
directory's ``controller.json`` and the CLI's transport (which must not import ``urllib``: every
``xce`` command would pay for it)."""

from __future__ import annotations


def split_url(url: str) -> tuple[str, str, int, str]:
    """``http://host:port/base`` -> (scheme, host, port, base): the one reading of a controller's
    address, for the services and for the CLI's transport (which must not import ``urllib``);
    ValueError says what is wrong with it."""
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        raise ValueError("expected http://HOST:PORT or https://HOST:PORT")
    hostport, slash, path = rest.partition("/")
    if hostport.startswith("["):  # [::1]:8080
        host, _, port_text = hostport[1:].partition("]")
        port_text = port_text.lstrip(":")
    else:
        host, _, port_text = hostport.partition(":")
    if not host:
        raise ValueError("no host; expected http://HOST:PORT")
    try:
        port = int(port_text) if port_text else (443 if scheme == "https" else 80)
    except ValueError:
        raise ValueError(f"bad port: {port_text!r} is not a number") from None
    if not 0 < port < 65536:
        raise ValueError(f"bad port: {port} out of range")
    return scheme, host, port, ("/" + path).rstrip("/") if slash else ""


def parse_urls(text: str, where: str = "controller URL") -> list[str]:
    """``http://a:8000,http://b:8000`` -> the addresses, checked; ValueError names the bad one."""
    urls = [u.strip().rstrip("/") for u in text.split(",") if u.strip()]
    if not urls:
        raise ValueError(f"empty {where} (expected http://HOST:PORT, or several separated by commas)")
    for u in urls:
        try:
            split_url(u)
        except ValueError as exc:
            raise ValueError(f"invalid {where} {u!r} ({exc})") from None
    return urls
