"""Checks for notebook 03c (remote servers over Streamable HTTP).

- `check_session_to_send(fn)`: the learner's `session_to_send(http) -> str | None` reads a list of
  recorded `HttpExchange`s and returns the `Mcp-Session-Id` the client must put on its next
  request, or None when there is none to send. It runs on five real recordings against the
  course's files server over HTTP: a 2025-11-25 session in use, the same kind of session after
  the client ended it with `DELETE`, stateless 2026-07-28 requests, a session the server no
  longer knows (its answer is 404), and an ended session followed by a new one.
- `check_accept_token(fn)`: the learner's `accept_token(claims, resource, now) -> bool` decides, as
  a resource server must, whether a token's claims let it in: issued *for this server* (`aud`,
  a string or a list, RFC 8707/9068) and not expired (`exp`, RFC 7519: now must be before it).
  Twelve tokens, each in three rounds of (resource, now), so a URL typed into the function or
  `time.time()` in place of `now` fails; among them a token meant for another service, which a
  server must neither accept nor pass on, and both sides of the expiry.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`);
header names, claims and ids they quote stay as they are on the wire.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from anyio.from_thread import start_blocking_portal
from mcp.shared.exceptions import MCPError

from course_lib.connection import HttpExchange, McpConnection
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import passed_a_call, raised, returned_early, shown, type_name, unassigned
from course_lib.exercises.guard import guard_checks
from course_lib.lang import say

# ---- exercise 1: session_to_send ----------------------------------------------------------------


def real_recordings() -> dict[str, list[HttpExchange]]:
    """The five HTTP conversations (see `_record`), recorded against a live server once per kernel
    (a server takes a second to start; the conversations do not change), each time as fresh copies
    a learner's code may change freely.

    Each is named in the edition's language (`RECORDING_ZH` holds the Chinese names).
    """
    return {say(name, RECORDING_ZH[name]): copy.deepcopy(http) for name, http in _record().items()}


@functools.cache
def _record() -> dict[str, list[HttpExchange]]:
    """The recordings under their English names: the three of the notebook, a session the server
    no longer knows (it answered 404), and an ended session followed by a new one."""
    from course_lib.fs_server import Workspace, build_server
    from course_lib.http_transport import serving
    from course_lib.paths import workspace_dir

    async def record(url: str, mode: str, end: bool) -> list[HttpExchange]:
        conn = McpConnection(url, mode=mode)
        async with conn:
            await conn.list_tools()
            if not end:
                return [h for h in conn.http if h.method == "POST"]  # the GET stream is still open
        return [h for h in conn.http if h.method != "GET"]  # ... ending with the DELETE

    async def forgotten(url: str) -> list[HttpExchange]:
        """The server ends the session (a DELETE from elsewhere); the client's next request gets 404."""
        conn = McpConnection(url, mode="legacy")
        with _quiet("mcp.client.streamable_http"):  # its own DELETE at the end fails too, and says so
            async with conn:
                await conn.list_tools()
                session = _expected_session(conn.http)
                async with httpx.AsyncClient() as other:
                    await other.delete(url, headers={"mcp-session-id": session or ""})
                with contextlib.suppress(MCPError):
                    await conn.list_tools()
        return [h for h in conn.http if h.method == "POST"]  # ... ending with the 404

    with serving(build_server(Workspace(workspace_dir()))) as srv, start_blocking_portal() as portal:
        recordings = {
            "a 2025-11-25 session in use": portal.call(record, srv.url, "legacy", False),
            "a 2025-11-25 session the client ended with DELETE": portal.call(record, srv.url, "legacy", True),
            "stateless 2026-07-28 requests": portal.call(record, srv.url, "2026-07-28", True),
            "a 2025-11-25 session the server no longer knows (404)": portal.call(forgotten, srv.url),
        }
        recordings["a session ended with DELETE, then a new one"] = [
            *recordings["a 2025-11-25 session the client ended with DELETE"], *portal.call(record, srv.url, "legacy", False)]
        return recordings


@contextlib.contextmanager
def _quiet(name: str) -> Iterator[None]:
    """Keep one library logger's warnings out of the learner's output while a recording is made."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


RECORDING_ZH = {
    "a 2025-11-25 session in use": "一个使用中的 2025-11-25 会话",
    "a 2025-11-25 session the client ended with DELETE": "一个客户端已用 DELETE 结束的 2025-11-25 会话",
    "stateless 2026-07-28 requests": "无状态的 2026-07-28 请求",
    "a 2025-11-25 session the server no longer knows (404)": "一个服务器已经不认识的 2025-11-25 会话（404）",
    "a session ended with DELETE, then a new one": "一个用 DELETE 结束的会话，然后是一个新会话",
}
"""The Chinese of each recording's name, as `real_recordings()` names them in the zh-CN edition."""


def _expected_session(http: list[HttpExchange]) -> str | None:
    session = None
    for exchange in http:
        if exchange.method == "DELETE" or exchange.status == 404:
            session = None
        elif "mcp-session-id" in exchange.response_headers and exchange.status < 400:
            session = exchange.response_headers["mcp-session-id"]
    return session


def check_session_to_send(fn: Callable[[list[HttpExchange]], str | None]) -> bool:
    """Run `fn` on each real recording and compare with the session id the next request needs."""
    if not_answered(fn):
        return failed(unassigned("session_to_send", "session_to_send(http)"))
    if not callable(fn):
        return failed(passed_a_call("session_to_send", fn))
    recordings = real_recordings()
    for shown_name, http in recordings.items():
        want = _expected_session(http)
        try:
            got = fn(list(http))
        except Exception as error:
            return failed(say("session_to_send raised {error} on {name}. Not every exchange has every header: look "
                              "at which ones each really carries.",
                              "session_to_send 在“{name}”上抛出了 {error}。并不是每次往来都带着每个头部："
                              "看看每一次实际带着哪些。", error=raised(error), name=shown_name))
        if got is not None and not isinstance(got, str):
            return failed(say("{name}: return the session id as a str (or None); you returned {kind} {got}.",
                              "{name}：请以 str 返回会话 id（或 None）；你返回的是 {kind} {got}。",
                              name=shown_name, kind=type_name(got), got=shown(got)))
        if got is None and want is None or got is not None and str.__str__(got) == want:
            continue
        first, last = http[0], http[-1]
        if want is not None and got is None:
            return failed(say("{name}: you returned None, but the server opened a session: its answer to {method} "
                              "carried mcp-session-id in its *response* headers (header names are kept in lower "
                              "case here: HTTP header names are case-insensitive).",
                              "{name}：你返回了 None，但服务器开启了一个会话：它对 {method} 的答复在*响应*头部里带着 "
                              "mcp-session-id（这里的头部名都按小写保存：HTTP 头部名不区分大小写）。",
                              name=shown_name, method=first.jsonrpc_method))
        if want is None and last.method == "DELETE":
            return failed(say("{name}: the session is over (DELETE answered {status}); sending its id again gets "
                              "404. Return None: the client has to initialize anew.",
                              "{name}：会话已经结束（DELETE 的答复是 {status}）；再发送它的 id 会得到 404。"
                              "请返回 None：客户端必须重新初始化。", name=shown_name, status=last.status))
        if want is None and last.status == 404:
            return failed(say("{name}: the server answered {method} with 404: it no longer knows that session. "
                              "Return None: the client has to initialize anew.",
                              "{name}：服务器对 {method} 的答复是 404：它已经不认识那个会话了。请返回 None：客户端必须重新初始化。",
                              name=shown_name, method=last.jsonrpc_method))
        if want is None:
            return failed(say("{name}: the 2026-07-28 era has no sessions, so nothing to send; you returned {got}.",
                              "{name}：2026-07-28 版没有会话，所以没有东西要发送；你返回的是 {got}。",
                              name=shown_name, got=shown(got)))
        if any(h.response_headers.get("mcp-session-id") == got for h in http):
            return failed(say("{name}: {got} is an earlier session's id; a later initialize opened {want!r}: send "
                              "the latest one the server gave.",
                              "{name}：{got} 是之前那个会话的 id；后来的一次 initialize 开启了 {want!r}：请发送服务器给出的最新 id。",
                              name=shown_name, got=shown(got), want=want))
        return failed(say("{name}: the next request needs {want!r}, you returned {got}.",
                          "{name}：下一次请求需要 {want!r}，你返回的是 {got}。", name=shown_name, want=want, got=shown(got)))
    return passed(say("all {n} recordings: the right Mcp-Session-Id (or none) for the next request.",
                      "全部 {n} 段记录：下一次请求要带的 Mcp-Session-Id（或者不带）都对了。", n=len(recordings)))


def _session_to_send_solution(http: list[HttpExchange]) -> str | None:
    session = None
    for exchange in http:
        if exchange.method == "DELETE" or exchange.status == 404:
            session = None  # ended, or forgotten by the server
        elif exchange.status < 400:
            session = exchange.response_headers.get("mcp-session-id", session)
    return session


# ---- exercise 2: accept_token ---------------------------------------------------------------------

RESOURCE = "https://files.example/mcp"
NOW = 1_800_000_000
CONTEXTS: list[tuple[str, int]] = [(RESOURCE, NOW), ("https://notes.example/mcp", 1_000_000_000),
                                   (RESOURCE, 4_000_000_000)]
"""(resource, now) for each round of tokens: the decision must follow the resource and the time it is
given (a resource typed into the function, or time.time() in place of now, fails a round)."""

TOKEN_CASES: list[tuple[str, Callable[[str, int], dict[str, Any]], bool]] = [
    ("issued for this server", lambda r, now: {"aud": r, "exp": now + 600, "sub": "ada"}, True),
    ("issued for another API (the user's calendar)", lambda r, now: {"aud": "https://calendar.example/api",
                                                                     "exp": now + 600}, False),
    ("an audience list naming this server", lambda r, now: {"aud": ["https://calendar.example/api", r],
                                                            "exp": now + 600}, True),
    ("an audience list without this server", lambda r, now: {"aud": ["https://calendar.example/api"],
                                                             "exp": now + 600}, False),
    ("no audience at all", lambda r, now: {"exp": now + 600, "sub": "ada"}, False),
    ("for a server whose URL merely starts like ours", lambda r, now: {"aud": r + "-admin", "exp": now + 600}, False),
    ("for a URL that merely contains ours", lambda r, now: {"aud": "https://evil.example/?next=" + r,
                                                            "exp": now + 600}, False),
    ("an empty audience list", lambda r, now: {"aud": [], "exp": now + 600}, False),
    ("for this server, but expired", lambda r, now: {"aud": r, "exp": now - 1}, False),
    ("for this server, expiring this very second", lambda r, now: {"aud": r, "exp": now}, False),
    ("for this server, one second left", lambda r, now: {"aud": r, "exp": now + 1}, True),
    ("for this server, with no expiry", lambda r, now: {"aud": r}, False),
]  # fmt: skip
"""(name, claims for (resource, now), must it be accepted?). RFC 7519 §4.1.4: the current time
MUST be before exp, so a token whose exp is now has expired; RFC 9068 makes exp required."""

TOKEN_CASE_ZH = {
    "issued for this server": "为本服务器签发的令牌",
    "issued for another API (the user's calendar)": "为另一个 API（用户的日历）签发的令牌",
    "an audience list naming this server": "受众列表里有本服务器的令牌",
    "an audience list without this server": "受众列表里没有本服务器的令牌",
    "no audience at all": "根本没有受众的令牌",
    "for this server, but expired": "为本服务器签发、但已过期的令牌",
    "for this server, expiring this very second": "为本服务器签发、恰好在这一秒过期的令牌",
    "for this server, one second left": "为本服务器签发、还剩一秒的令牌",
    "for this server, with no expiry": "为本服务器签发、却没有过期时间的令牌",
    "for a server whose URL merely starts like ours": "签发给一个 URL 只是开头和我们一样的服务器的令牌",
    "for a URL that merely contains ours": "签发给一个只是包含我们 URL 的地址的令牌",
    "an empty audience list": "受众列表为空的令牌",
}
"""The Chinese of each token case (the names stay English: the check reads them)."""


def _token_verdict(name: str, claims: dict[str, Any], want: bool, resource: str, now: int) -> str:
    """Why the learner's decision on one token is wrong (it is)."""
    token = say("a token {name}", "{name}", name=say(name, TOKEN_CASE_ZH[name]))
    given = say(" (resource {resource}, now {now})", "（resource 为 {resource}，now 为 {now}）", resource=resource, now=now)
    if want and isinstance(claims.get("aud"), list):
        return say("{token}{given} must be accepted: `aud` may be a list, and this server's URL only has to be one "
                   "of its entries.",
                   "{token}{given}必须被接受：`aud` 可以是一个列表，本服务器的 URL 只要是其中一项即可。", token=token, given=given)
    if want:
        return say("{token}{given} must be accepted: issued for this resource and exp {exp} is after now. Compare "
                   "aud with the resource you are given and exp with the now you are given (not a URL typed in, not "
                   "time.time()).",
                   "{token}{given}必须被接受：它是为这个 resource 签发的，exp {exp} 晚于 now。要把 aud 与传入的 resource "
                   "比较，把 exp 与传入的 now 比较（不是写死的 URL，也不是 time.time()）。",
                   token=token, given=given, exp=claims["exp"])
    if "another" in name or "without" in name or "empty" in name:
        return say("{token} ({claims}) was accepted: it was issued for someone else. Accepting it "
                   "makes this server a confused deputy; forwarding it is token passthrough. Refuse it.",
                   "{token}（{claims}）被接受了：它是签发给别人的。接受它，本服务器就成了混淆代理"
                   "（confused deputy）；把它转发出去就是令牌透传（token passthrough）。拒绝它。", token=token, claims=claims)
    if "starts like" in name or "contains" in name:
        return say("{token} ({aud!r}) was accepted: compare the whole audience, not a prefix or a part of it.",
                   "{token}（{aud!r}）被接受了：要比较完整的受众，而不是前缀或其中的一部分。", token=token, aud=claims["aud"])
    if "very second" in name:
        return say("{token}{given} was accepted: exp equals now, and a token is valid only while now < exp "
                   "(RFC 7519: the current time MUST be before exp).",
                   "{token}{given}被接受了：exp 等于 now，而令牌只在 now < exp 时有效（RFC 7519：当前时间必须早于 exp）。",
                   token=token, given=given)
    if "expired" in name:
        return say("{token}{given} was accepted: exp {exp} is before now. Compare exp with the now you are given, "
                   "not with time.time().",
                   "{token}{given}被接受了：exp {exp} 早于 now。要把 exp 与传入的 now 比较，而不是与 time.time() 比较。",
                   token=token, given=given, exp=claims["exp"])
    if "no expiry" in name:
        return say("{token} ({claims}) was accepted: a token with no exp never expires, which an access token must "
                   "(RFC 9068 makes exp required). Refuse it.",
                   "{token}（{claims}）被接受了：没有 exp 的令牌永不过期，而访问令牌必须会过期（RFC 9068 规定 exp 必须有）。"
                   "拒绝它。", token=token, claims=claims)
    return say("{token} ({claims}) must be refused.", "{token}（{claims}）必须被拒绝。", token=token, claims=claims)


def check_accept_token(fn: Callable[[dict[str, Any], str, int], bool]) -> bool:
    """Run `fn(claims, resource, now)` on every case in every context (`CONTEXTS`) and compare with
    what a resource server must decide."""
    if not_answered(fn):
        return failed(unassigned("accept_token", "accept_token(claims, resource, now)"))
    if not callable(fn):
        return failed(passed_a_call("accept_token", fn))
    for resource, now in CONTEXTS:
        for name, make, want in TOKEN_CASES:
            claims = make(resource, now)
            token = say("a token {name}", "{name}", name=say(name, TOKEN_CASE_ZH[name]))
            try:
                got = fn(json.loads(json.dumps(claims)), resource, now)
            except Exception as error:
                return failed(say("accept_token raised {error} for {token} {claims}: a claim may be missing, or be a list.",
                                  "accept_token 在{token} {claims} 上抛出了 {error}：某个声明（claim）可能缺失，或者是一个列表。",
                                  error=raised(error), token=token, claims=claims))
            if got is want:
                continue
            if not isinstance(got, bool):
                return failed(say("{token}: return True or False, not {got}.", "{token}：请返回 True 或 False，而不是 {got}。",
                                  token=token, got=shown(got)) + returned_early(got))
            return failed(_token_verdict(name, claims, want, resource, now))
    return passed(say("all {n} tokens decided as a resource server must, for {rounds} resources and times.",
                      "在 {rounds} 组 resource 和时间下，全部 {n} 个令牌都按资源服务器应有的方式作出了判定。",
                      n=len(TOKEN_CASES), rounds=len(CONTEXTS)))


def _accept_token_solution(claims: dict[str, Any], resource: str, now: int) -> bool:
    audience = claims.get("aud", [])
    audiences = [audience] if isinstance(audience, str) else audience
    return resource in audiences and claims.get("exp", 0) > now


SOLUTIONS: Solutions = {
    "check_session_to_send": lambda: _session_to_send_solution,
    "check_accept_token": lambda: _accept_token_solution,
}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
