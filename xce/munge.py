"""MUNGE credentials through ``libmunge`` (Debian ``libmunge2``), as Slurm authenticates its users.

A credential is made by the local ``munged`` for the calling process's uid and gid (the daemon
learns them from the kernel, not from the caller), encrypted and MACed with the key every host of
the cluster shares. The controller decodes it through its own ``munged``, which also refuses it when
it was made with another key, has expired (its time-to-live, 5 minutes by default) or was already
decoded once (a replay). So a user proves who they are without any token to hand out or to steal.

Standard library only (``ctypes``): the CLI imports this module when it has no token.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

DEFAULT_SOCKET = "/run/munge/munge.socket.2"

_OPT_TTL = 4
_OPT_SOCKET = 8
#: munge_err_t codes worth a word of their own.
CRED_INVALID, CRED_EXPIRED, CRED_REWOUND, CRED_REPLAYED = 14, 15, 16, 17
SOCKET_ERROR = 6


class MungeError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Credential:
    uid: int
    gid: int
    payload: bytes


_lib: ctypes.CDLL | None = None


def _library() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        try:
            lib = ctypes.CDLL("libmunge.so.2")
        except OSError:
            raise MungeError(0, "libmunge is not installed (Debian package libmunge2)") from None
        lib.munge_ctx_create.restype = ctypes.c_void_p
        lib.munge_ctx_destroy.argtypes = [ctypes.c_void_p]
        lib.munge_ctx_strerror.restype = ctypes.c_char_p
        lib.munge_ctx_strerror.argtypes = [ctypes.c_void_p]
        lib.munge_strerror.restype = ctypes.c_char_p
        lib.munge_strerror.argtypes = [ctypes.c_int]
        lib.munge_encode.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        lib.munge_decode.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                     ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_uint32),
                                     ctypes.POINTER(ctypes.c_uint32)]
        _lib = lib
    return _lib


def _free(ptr: int | None) -> None:
    if ptr:
        ctypes.CDLL(None).free(ctypes.c_void_p(ptr))


def _context(lib: ctypes.CDLL, socket: str | None, ttl: int | None) -> int:
    ctx = lib.munge_ctx_create()
    if not ctx:
        raise MungeError(5, "cannot create a MUNGE context (out of memory)")
    if socket:
        lib.munge_ctx_set(ctypes.c_void_p(ctx), _OPT_SOCKET, ctypes.c_char_p(os.fsencode(socket)))
    if ttl is not None:
        lib.munge_ctx_set(ctypes.c_void_p(ctx), _OPT_TTL, ctypes.c_int(ttl))
    return ctx


def _error(lib: ctypes.CDLL, ctx: int, code: int) -> MungeError:
    text = lib.munge_ctx_strerror(ctypes.c_void_p(ctx)) or lib.munge_strerror(code) or b"unknown error"
    return MungeError(code, text.decode(errors="replace"))


def encode(payload: bytes = b"", *, socket: str | None = None, ttl: int | None = None) -> str:
    """A credential for this process's uid and gid, carrying ``payload``."""
    lib = _library()
    ctx = _context(lib, socket, ttl)
    cred = ctypes.c_char_p()
    try:
        code = lib.munge_encode(ctypes.byref(cred), ctypes.c_void_p(ctx), payload, len(payload))
        if code:
            raise _error(lib, ctx, code)
        text = cred.value.decode()
    finally:
        if cred:
            _free(ctypes.cast(cred, ctypes.c_void_p).value)
        lib.munge_ctx_destroy(ctypes.c_void_p(ctx))
    return text


def decode(credential: str, *, socket: str | None = None) -> Credential:
    """The uid, gid and payload a credential carries; :class:`MungeError` when munged refuses it."""
    lib = _library()
    ctx = _context(lib, socket, None)
    buf = ctypes.c_void_p()
    length = ctypes.c_int()
    uid, gid = ctypes.c_uint32(), ctypes.c_uint32()
    try:
        code = lib.munge_decode(credential.encode(), ctypes.c_void_p(ctx), ctypes.byref(buf), ctypes.byref(length),
                                ctypes.byref(uid), ctypes.byref(gid))
        payload = ctypes.string_at(buf.value, length.value) if buf.value else b""
        if code:
            raise _error(lib, ctx, code)
    finally:
        _free(buf.value)
        lib.munge_ctx_destroy(ctypes.c_void_p(ctx))
    return Credential(uid.value, gid.value, payload)
