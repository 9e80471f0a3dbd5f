"""Running a controller: open the state, bind, lead or follow, serve, and publish the address.

The socket is bound here, before uvicorn starts, so that ``--port 0`` works: the kernel picks a
free port and the real one goes into ``<state-dir>/controller.json`` once the server accepts
connections. A test or ``xce up`` waits for that file (with the new pid) instead of guessing. The
controller tries to lead only once it is bound: the lease records the address followers send
clients to.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import signal
import socket
import time

from xce.client import statedir
from xce.controller.service import Controller, Settings

log = logging.getLogger("xce.controller")


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY on accepted connections only when the
    # listening socket says TCP explicitly; without it every keep-alive request waits ~40 ms for a
    # delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _url(host: str, port: int, scheme: str = "http") -> str:
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def _advertised(host: str, port: int, scheme: str) -> str:
    """What other hosts should use: the bound address, or this host's name for a wildcard bind."""
    if host in ("0.0.0.0", "", "::"):
        return f"{scheme}://{socket.getfqdn()}:{port}"
    return _url(host, port, scheme)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_transport(host: str, tls: bool, insecure_http: bool) -> None:
    """Refuse plain HTTP beyond loopback unless the configuration explicitly accepts it."""
    if tls or is_loopback(host):
        return
    if not insecure_http:
        raise RuntimeError(f"refusing to serve plain HTTP on {host}: tokens and job data would cross the network "
                           f"unencrypted; set [controller] tls_cert and tls_key in the configuration, or "
                           f"insecure_http = true to accept that")
    log.warning("serving plain HTTP on %s because [controller] insecure_http = true: tokens and job data cross "
                "the network unencrypted", host)


class _HeadWithBody:
    """A connection's transport that holds back a response's head until its body is written.

    uvicorn writes the status line and headers, then the body, in two calls: two send(2) calls,
    two TCP segments and two wake-ups of the client for every answer, a tenth of the controller's
    CPU under a stream of job reports. The head now waits for the next write, and for no longer
    than the current turn of the event loop: an answer without a body (HEAD, 304), ``100
    Continue`` and a stream's head still leave at once. Bytes are delayed, never reordered."""

    __slots__ = ("_transport", "_head", "_loop")

    def __init__(self, transport) -> None:
        self._transport = transport
        self._head = b""
        self._loop = asyncio.get_running_loop()

    def write(self, data: bytes) -> None:
        if self._head:
            data, self._head = self._head + data, b""
        elif data.startswith(b"HTTP/1.1 ") and data.endswith(b"\r\n\r\n"):
            self._head = data
            self._loop.call_soon(self._flush)
            return
        self._transport.write(data)

    def _flush(self) -> None:
        if self._head:
            data, self._head = self._head, b""
            self._transport.write(data)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str):
        return getattr(self._transport, name)


def _protocol() -> type:
    """uvicorn's httptools protocol (httptools parses HTTP in C), with :class:`_HeadWithBody`."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class OneWritePerAnswer(HttpToolsProtocol):
        def connection_made(self, transport) -> None:
            super().connection_made(_HeadWithBody(transport))

    return OneWritePerAnswer


def _noted(signum, frame) -> None:
    log.info("controller stopping (signal %d)", signum)  # asked for: nothing needs attention


def serve(settings: Settings) -> None:
    """Run until SIGINT/SIGTERM. Raises on a configuration, store or state-directory problem."""
    import uvicorn

    from xce.controller.web.app import create_app

    ctl = Controller(settings)
    ctl.open(lead=False)  # it leads (or not) once its address is known, for the lease
    try:
        # The requirement parser pulls in the scheduling core; load it now, not on the first submit.
        import importlib

        importlib.import_module("xce.core.resreq")

        tls = ctl.config.controller
        check_transport(settings.host, tls.tls_cert is not None, tls.insecure_http)
        ssl_options = {}
        if tls.tls_cert is not None:
            for what, path in (("tls_cert", tls.tls_cert), ("tls_key", tls.tls_key)):
                if not os.access(path, os.R_OK):
                    raise RuntimeError(f"[controller] {what}: cannot read {path}")
            ssl_options = {"ssl_certfile": tls.tls_cert, "ssl_keyfile": tls.tls_key}
        sock = _bind(settings.host, settings.port)
        port = sock.getsockname()[1]
        scheme = "https" if ssl_options else "http"
        ctl.advertise(settings.url or _advertised(settings.host, port, scheme))
        ctl.try_lead()
        app = create_app(ctl)
        # log_config=None: uvicorn's own messages go through the process's handlers (xce.logs), in its format.
        # httptools (C) parses HTTP and uvloop runs the event loop: each request costs the controller
        # noticeably less CPU than h11 on asyncio's own loop, and every job is several requests.
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", log_config=None,
                                http=_protocol(), timeout_graceful_shutdown=3, timeout_keep_alive=75, **ssl_options)
        try:
            config.load()
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
            raise RuntimeError(f"[controller] tls_cert/tls_key: cannot serve HTTPS with them: {exc}") from None
        server = uvicorn.Server(config)
        # uvicorn shuts down gracefully on SIGINT/SIGTERM and then re-raises the signal to the handler
        # it found; with the default handlers that kills the process before the cleanup below runs.
        previous = {sig: signal.signal(sig, _noted) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            import uvloop

            url = _url(settings.host, port, scheme)
            with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                runner.run(_run(server, sock, ctl, url, tls.tls_ca if ssl_options else None))
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    finally:
        info = statedir.read_info(settings.state_dir)
        if info and info.get("pid") == os.getpid():
            try:
                statedir.info_path(settings.state_dir).unlink()
            except OSError:
                pass
        ctl.close()


async def _answer_long_polls_on_stop(server, ctl: Controller) -> None:
    """uvicorn waits for requests in flight when told to stop, then cancels them (an ERROR and a
    traceback each): long-polls are answered as soon as it is told, so it stops quietly and at once."""
    while not server.should_exit:
        await asyncio.sleep(0.05)
    ctl.answer_long_polls()


async def _run(server, sock: socket.socket, ctl: Controller, url: str, ca_file: str | None) -> None:
    task = asyncio.create_task(server.serve(sockets=[sock]))
    watch = asyncio.create_task(_answer_long_polls_on_stop(server, ctl))
    task.add_done_callback(lambda _: watch.cancel())
    while not server.started:
        if task.done():
            await task
            return
        await asyncio.sleep(0.01)
    info = {"url": url, "pid": os.getpid(), "state_dir": str(ctl.state_dir), "advertised": ctl.settings.url,
            "started": time.time_ns()}
    if ca_file:
        info["ca_file"] = os.path.abspath(ca_file)
    statedir.write_info(ctl.state_dir, info)
    log.warning("XCE controller listening on %s (state %s, %s)", url, ctl.state_dir,
                "leader" if ctl.leader else "follower: the API sends callers to the leader")
    await task
