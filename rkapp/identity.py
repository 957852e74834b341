"""Who is asking: the app's own owner identity, for the upload store (private uploads) and the server's
fair shares (one heavy run per student at a time).

The identity is a cookie of the app's own, ``rkcore_owner``, set by :class:`OwnerCookie` (ASGI middleware
of the server entry ``serve.py``, Streamlit's public ``st.App``) on the first HTTP response a browser gets:
``HttpOnly`` (no page script reads it, neither ours nor another app's on the same host), ``SameSite=Strict``,
``Secure`` over HTTPS, a 128-bit random id signed with the server's secret (HMAC-SHA256). The script reads
it with the public ``st.context.cookies`` (the websocket's handshake carries it) and accepts it only when
its signature is exact (:func:`owner_from_cookie`): a changed character, a re-encoded or re-masked value,
or an id not issued by a server holding the secret is no owner. The owner id kept by the store is an HMAC
of the cookie's id, never the cookie.

Why not Streamlit's XSRF cookie (the identity before issue 37): it is readable by any page script on the
host (it is the double-submit token, not HttpOnly), and Streamlit re-masks it on each health check, so it
can only be compared unmasked: any mask of a stolen token was the same owner.

Without a valid cookie (a server started with plain ``streamlit run app.py``, AppTest, a client that skipped
the HTTP page), the owner is the session alone: a reload then asks to upload again, never finds another's
file. What remains (README "Hosting a class"): cookies are per host, not per port, so a *server* on the same
host name (another port) receives the cookie in its requests (HttpOnly keeps it from scripts, not from
servers): give the app its own host name. The secret is ``RKCORE_COOKIE_SECRET`` (hex, shared by every app
process behind a proxy) or a random one per process (its cookies are re-issued after a restart, when the
upload store is empty anyway).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets

__all__ = ["COOKIE_SECRET_ENV", "OWNER_COOKIE", "OwnerCookie", "issue_cookie", "keyed_digest", "owner_from_cookie",
           "owner_id"]

OWNER_COOKIE = "rkcore_owner"
COOKIE_SECRET_ENV = "RKCORE_COOKIE_SECRET"
#: A browser keeps its identity for 30 days of not using the app (the store forgets uploads after hours).
COOKIE_MAX_AGE = 30 * 24 * 3600
_VALUE = re.compile(r"^v1\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$")  # version, 128-bit id, 256-bit HMAC
SESSION_OWNER_KEY = "_rk_session_owner"  # the owner id of a session without a valid cookie


def _secret() -> bytes:
    text = os.environ.get(COOKIE_SECRET_ENV, "").strip()
    if text:
        try:
            secret = bytes.fromhex(text)
        except ValueError:
            raise ValueError(f"{COOKIE_SECRET_ENV} must be hexadecimal (e.g. from `openssl rand -hex 32`).") from None
        if len(secret) < 16:
            raise ValueError(f"{COOKIE_SECRET_ENV} must hold at least 16 bytes (32 hexadecimal digits).")
        return secret
    return _PROCESS_SECRET


_PROCESS_SECRET = secrets.token_bytes(32)


def _mac(purpose: bytes, ident: str) -> bytes:
    return hmac.new(_secret(), b"rkcore owner|" + purpose + b"|" + ident.encode("ascii"), hashlib.sha256).digest()


def keyed_digest(purpose: bytes, text: str) -> str:
    """HMAC-SHA256 of ``text`` with the server's secret, for ``purpose`` (a name no other use shares): the
    same in every app process holding the secret, and no one without it can compute or invert it.

    Parameters
    ----------
    purpose : bytes
        What the digest is for (b"voter": rkapp.questions), so digests of one use never match another's.
    text : str
        What is hashed.

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    return hmac.new(_secret(), b"rkcore digest|" + purpose + b"|" + text.encode("utf-8"), hashlib.sha256).hexdigest()


def issue_cookie() -> str:
    """A new cookie value: ``v1.<random id>.<HMAC of the id>``.

    Returns
    -------
    str
        The value of a new ``rkcore_owner`` cookie (URL-safe characters only).
    """
    ident = secrets.token_urlsafe(16)
    return f"v1.{ident}.{base64.urlsafe_b64encode(_mac(b'cookie', ident)).decode().rstrip('=')}"


def owner_from_cookie(value: str | None) -> str | None:
    """The owner id of an ``rkcore_owner`` cookie whose signature is exact, else None.

    Parameters
    ----------
    value : str or None
        The cookie's value as the browser sent it.

    Returns
    -------
    str or None
        ``"browser:"`` + an HMAC of the cookie's id (the same for every request of the browser), or None
        for a missing, malformed or forged value.
    """
    match = _VALUE.match(value) if isinstance(value, str) else None
    if match is None:
        return None
    ident, signature = match.groups()
    expected = base64.urlsafe_b64encode(_mac(b"cookie", ident)).decode().rstrip("=")
    if not hmac.compare_digest(expected, signature):
        return None
    return "browser:" + _mac(b"owner", ident).hex()


def _cookie_header_value(header: bytes) -> str | None:
    for part in header.decode("latin-1").split(";"):
        name, _, value = part.strip().partition("=")
        if name == OWNER_COOKIE:
            return value
    return None


class OwnerCookie:
    """ASGI middleware: every HTTP response to a request without a valid ``rkcore_owner`` cookie sets a new one
    (HttpOnly, SameSite=Strict, Path=/, Secure over HTTPS). Websocket and lifespan messages pass untouched
    (the websocket's handshake carries the cookie the page's HTTP response set).

    Parameters
    ----------
    app : ASGI application
        The application it wraps (Streamlit's).
    """

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http":
            return await self.app(scope, receive, send)
        sent = [_cookie_header_value(v) for k, v in scope.get("headers", []) if k == b"cookie"]
        if any(owner_from_cookie(v) for v in sent if v):
            return await self.app(scope, receive, send)
        https = scope.get("scheme") == "https" or any(
            k == b"x-forwarded-proto" and v.strip() == b"https" for k, v in scope.get("headers", []))
        cookie = (f"{OWNER_COOKIE}={issue_cookie()}; Path=/; Max-Age={COOKIE_MAX_AGE}; HttpOnly; SameSite=Strict"
                  + ("; Secure" if https else "")).encode("ascii")

        async def send_with_cookie(message):
            if message.get("type") == "http.response.start":
                message = dict(message, headers=[*message.get("headers", []), (b"set-cookie", cookie)])
            await send(message)

        return await self.app(scope, receive, send_with_cookie)


def owner_id() -> str:
    """Who is asking: the browser (its verified ``rkcore_owner`` cookie), else this session alone.

    Returns
    -------
    str
        ``"browser:..."`` or ``"session:..."`` (random per session, kept in its state).
    """
    import streamlit as st

    try:
        owner = owner_from_cookie(st.context.cookies.get(OWNER_COOKIE))  # the websocket handshake's cookies
    except Exception:  # noqa: BLE001 - no browser context (a bare script run): the session is the owner
        owner = None
    if owner is None:
        owner = st.session_state.setdefault(SESSION_OWNER_KEY, "session:" + secrets.token_hex(16))
    return owner
