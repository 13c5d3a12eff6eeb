"""Checks for notebook 03c (remote servers over Streamable HTTP).

- `check_session_to_send(fn)`: the learner's `session_to_send(http) -> str | None` reads a list of
  recorded `HttpExchange`s and returns the `Mcp-Session-Id` the client must put on its next
  request, or None when there is none to send. It runs on three real recordings against the
  course's files server over HTTP: a 2025-11-25 session in use, the same kind of session after
  the client ended it with `DELETE`, and stateless 2026-07-28 requests.
- `check_accept_token(fn)`: the learner's `accept_token(claims, resource, now) -> bool` decides, as
  a resource server must, whether a token's claims let it in: issued *for this server* (`aud`,
  a string or a list, RFC 8707/9068) and not expired (`exp`). The cases include a token meant
  for another service, which a server must neither accept nor pass on.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`);
header names, claims and ids they quote stay as they are on the wire.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from anyio.from_thread import start_blocking_portal

from course_lib.connection import HttpExchange, McpConnection
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.lang import say

# ---- exercise 1: session_to_send ----------------------------------------------------------------


def real_recordings() -> dict[str, list[HttpExchange]]:
    """Record the three HTTP conversations (see the module docstring) against a live server.

    Each is named in the edition's language (`RECORDING_ZH` holds the Chinese names).
    """
    return {say(name, RECORDING_ZH[name]): http for name, http in _record().items()}


def _record() -> dict[str, list[HttpExchange]]:
    """The three recordings under their English names."""
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

    with serving(build_server(Workspace(workspace_dir()))) as srv, start_blocking_portal() as portal:
        return {
            "a 2025-11-25 session in use": portal.call(record, srv.url, "legacy", False),
            "a 2025-11-25 session the client ended with DELETE": portal.call(record, srv.url, "legacy", True),
            "stateless 2026-07-28 requests": portal.call(record, srv.url, "2026-07-28", True),
        }


RECORDING_ZH = {
    "a 2025-11-25 session in use": "一个使用中的 2025-11-25 会话",
    "a 2025-11-25 session the client ended with DELETE": "一个客户端已用 DELETE 结束的 2025-11-25 会话",
    "stateless 2026-07-28 requests": "无状态的 2026-07-28 请求",
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
        return failed(say("Not answered yet: define session_to_send(http) and pass the function itself.",
                          "还没有作答：定义 session_to_send(http)，并传入函数本身。"))
    if not callable(fn):
        return failed(say("Pass the function itself (session_to_send, without parentheses); you passed {fn!r}.",
                          "请传入函数本身（session_to_send，不带括号）；你传入的是 {fn!r}。", fn=fn))
    recordings = real_recordings()
    for shown, http in recordings.items():
        want = _expected_session(http)
        try:
            got = fn(list(http))
        except Exception as error:
            return failed(say("session_to_send raised {kind}: {error} on {name}. Not every "
                              "exchange has every header: look at which ones each really carries.",
                              "session_to_send 在“{name}”上抛出了 {kind}: {error}。并不是每次往来都带着每个头部："
                              "看看每一次实际带着哪些。", kind=type(error).__name__, error=error, name=shown))
        if got == want:
            continue
        first = http[0]
        if want is not None and got is None:
            return failed(say("{name}: you returned None, but the server opened a session: its answer to "
                              "{method} carried mcp-session-id in its *response* headers.",
                              "{name}：你返回了 None，但服务器开启了一个会话：它对 {method} 的答复在*响应*头部里带着 "
                              "mcp-session-id。", name=shown, method=first.jsonrpc_method))
        if want is None and got is not None and http[-1].method == "DELETE":
            return failed(say("{name}: the session is over (DELETE answered {status}); sending its id "
                              "again gets 404. Return None: the client has to initialize anew.",
                              "{name}：会话已经结束（DELETE 的答复是 {status}）；再发送它的 id 会得到 404。"
                              "请返回 None：客户端必须重新初始化。", name=shown, status=http[-1].status))
        if want is None and got is not None:
            return failed(say("{name}: the 2026-07-28 era has no sessions, so nothing to send; you returned {got!r}.",
                              "{name}：2026-07-28 版没有会话，所以没有东西要发送；你返回的是 {got!r}。",
                              name=shown, got=got))
        return failed(say("{name}: the next request needs {want!r}, you returned {got!r}.",
                          "{name}：下一次请求需要 {want!r}，你返回的是 {got!r}。", name=shown, want=want, got=got))
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
TOKEN_CASES: list[tuple[str, dict[str, Any], bool]] = [
    ("issued for this server", {"aud": RESOURCE, "exp": NOW + 600, "sub": "ada"}, True),
    ("issued for another API (the user's calendar)", {"aud": "https://calendar.example/api", "exp": NOW + 600}, False),
    ("an audience list naming this server", {"aud": ["https://calendar.example/api", RESOURCE], "exp": NOW + 600}, True),
    ("an audience list without this server", {"aud": ["https://calendar.example/api"], "exp": NOW + 600}, False),
    ("no audience at all", {"exp": NOW + 600, "sub": "ada"}, False),
    ("for this server, but expired", {"aud": RESOURCE, "exp": NOW - 1}, False),
    ("for a server whose URL merely starts like ours", {"aud": RESOURCE + "-admin", "exp": NOW + 600}, False),
]

TOKEN_CASE_ZH = {
    "issued for this server": "为本服务器签发的令牌",
    "issued for another API (the user's calendar)": "为另一个 API（用户的日历）签发的令牌",
    "an audience list naming this server": "受众列表里有本服务器的令牌",
    "an audience list without this server": "受众列表里没有本服务器的令牌",
    "no audience at all": "根本没有受众的令牌",
    "for this server, but expired": "为本服务器签发、但已过期的令牌",
    "for a server whose URL merely starts like ours": "签发给一个 URL 只是开头和我们一样的服务器的令牌",
}
"""The Chinese of each token case (the names stay English: the check reads them)."""


def check_accept_token(fn: Callable[[dict[str, Any], str, int], bool]) -> bool:
    """Run `fn(claims, RESOURCE, NOW)` on every case and compare with what a resource server must decide."""
    if not_answered(fn):
        return failed(say("Not answered yet: define accept_token(claims, resource, now) and pass the function itself.",
                          "还没有作答：定义 accept_token(claims, resource, now)，并传入函数本身。"))
    if not callable(fn):
        return failed(say("Pass the function itself (accept_token, without parentheses); you passed {fn!r}.",
                          "请传入函数本身（accept_token，不带括号）；你传入的是 {fn!r}。", fn=fn))
    for name, claims, want in TOKEN_CASES:
        token = say("a token {name}", "{name}", name=say(name, TOKEN_CASE_ZH[name]))
        try:
            got = fn(json.loads(json.dumps(claims)), RESOURCE, NOW)
        except Exception as error:
            return failed(say("accept_token raised {kind}: {error} for {token} {claims}: "
                              "a claim may be missing, or be a list.",
                              "accept_token 在{token} {claims} 上抛出了 {kind}: {error}：某个声明（claim）可能缺失，或者是一个列表。",
                              kind=type(error).__name__, error=error, token=token, claims=claims))
        if got is want:
            continue
        if not isinstance(got, bool):
            return failed(say("{token}: return True or False, not {got!r}.",
                              "{token}：请返回 True 或 False，而不是 {got!r}。", token=token, got=got))
        if want:
            return failed(say("{token} ({claims}) must be accepted: `aud` may be a list, and this server's "
                              "URL only has to be one of its entries.",
                              "{token}（{claims}）必须被接受：`aud` 可以是一个列表，本服务器的 URL 只要是其中一项即可。",
                              token=token, claims=claims))
        if "another" in name or "without" in name:
            return failed(say("{token} ({claims}) was accepted: it was issued for someone else. Accepting it "
                              "makes this server a confused deputy; forwarding it is token passthrough. Refuse it.",
                              "{token}（{claims}）被接受了：它是签发给别人的。接受它，本服务器就成了混淆代理"
                              "（confused deputy）；把它转发出去就是令牌透传（token passthrough）。拒绝它。",
                              token=token, claims=claims))
        if "starts like" in name:
            return failed(say("{token} ({aud!r}) was accepted: compare the whole audience, "
                              "not a prefix.",
                              "{token}（{aud!r}）被接受了：要比较完整的受众，而不是前缀。", token=token, aud=claims["aud"]))
        return failed(say("{token} ({claims}) must be refused.", "{token}（{claims}）必须被拒绝。",
                          token=token, claims=claims))
    return passed(say("all {n} tokens decided as a resource server must.",
                      "全部 {n} 个令牌都按资源服务器应有的方式作出了判定。", n=len(TOKEN_CASES)))


def _accept_token_solution(claims: dict[str, Any], resource: str, now: int) -> bool:
    audience = claims.get("aud", [])
    audiences = [audience] if isinstance(audience, str) else audience
    return resource in audiences and claims.get("exp", 0) > now


SOLUTIONS: Solutions = {
    "check_session_to_send": lambda: _session_to_send_solution,
    "check_accept_token": lambda: _accept_token_solution,
}
