"""Notebook 03c's checks against the answers learners really write: one wrong answer per mistake the
exercise is about (each must fail naming it, in English and in the zh-CN edition), other correct
answers than the reference (each must pass), and the property the exercise promises (the session id
for every history, a 404 and a renewed session included; a token decision that follows the
resource and the time it is given, on both sides of the expiry)."""

from __future__ import annotations

import time

import pytest

from course_lib.exercises.nb03c import CONTEXTS, TOKEN_CASES, check_accept_token, check_session_to_send

# ---- exercise 1: session_to_send ----------------------------------------------------------------


def from_the_request(http):
    return http[0].request_headers.get("mcp-session-id")


def the_first_id_ever_given(http):
    return next((h.response_headers["mcp-session-id"] for h in http if "mcp-session-id" in h.response_headers), None)


def delete_not_noticed(http):
    session = None
    for exchange in http:
        if exchange.status == 404:
            session = None
        elif exchange.status < 400:
            session = exchange.response_headers.get("mcp-session-id", session)
    return session


def a_404_not_noticed(http):
    session = None
    for exchange in http:
        if exchange.method == "DELETE":
            session = None
        elif "mcp-session-id" in exchange.response_headers:
            session = exchange.response_headers["mcp-session-id"]
    return session


def brackets_on_every_exchange(http):
    return None if http[-1].method == "DELETE" else http[-1].response_headers["mcp-session-id"]


def capitalised_header_name(http):
    return http[0].response_headers.get("Mcp-Session-Id")


def the_header_as_a_dict(http):
    return {"mcp-session-id": the_first_id_ever_given(http)} if the_first_id_ever_given(http) else None


def a_made_up_id(http):
    return "0" * 32


SESSION_WRONG = [  # (what the learner did, answer, English words, Chinese words)
    ("the request's headers read", from_the_request, ["you returned None, but the server opened a session",
                                                      "*response* headers"], ["在*响应*头部里带着"]),
    ("a DELETE not noticed", delete_not_noticed, ["ended with DELETE: the session is over", "Return None"],
     ["会话已经结束"]),
    ("a 404 not noticed", a_404_not_noticed, ["no longer knows (404)", "answered tools/list with 404",
                                              "initialize anew"], ["它已经不认识那个会话了"]),
    ("the first id ever given kept", the_first_id_ever_given, ["ended with DELETE: the session is over"], ["会话已经结束"]),
    ("a header read with brackets everywhere", brackets_on_every_exchange, ["raised KeyError: 'mcp-session-id'",
                                                                            "Not every exchange has every header"],
     ["并不是每次往来都带着每个头部"]),
    ("the header name capitalised", capitalised_header_name, ["header names are kept in lower case here"],
     ["这里的头部名都按小写保存"]),
    ("the header returned as a dict", the_header_as_a_dict, ["return the session id as a str (or None)", "dict"],
     ["请以 str 返回会话 id"]),
    ("an id made up", a_made_up_id, ["the next request needs", "'00000000000000000000000000000000'"], ["下一次请求需要"]),
    ("answer = ... never set", ..., ["set answer = session_to_send"], ["answer = session_to_send"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in SESSION_WRONG], ids=[row[0] for row in SESSION_WRONG])
def test_session_to_send_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_session_to_send, answer, en, zh)


def backwards(http):
    """Another shape: walk back from the end to the last thing that decided."""
    for exchange in reversed(http):
        if exchange.method == "DELETE" or exchange.status == 404:
            return None
        if exchange.status < 400 and "mcp-session-id" in exchange.response_headers:
            return exchange.response_headers["mcp-session-id"]
    return None


def test_session_to_send_other_right_answer_passes(corpus):
    corpus.right(check_session_to_send, backwards)


def test_an_earlier_sessions_id_after_a_new_one_is_named(corpus):
    def forgets_only_at_the_end(http):
        if http[-1].method == "DELETE" or http[-1].status == 404:
            return None
        return next((h.response_headers["mcp-session-id"] for h in http if "mcp-session-id" in h.response_headers), None)

    corpus.wrong(check_session_to_send, forgets_only_at_the_end,
                 ["then a new one", "is an earlier session's id", "send the latest one"], ["请发送服务器给出的最新 id"])


# ---- exercise 2: accept_token -------------------------------------------------------------------


def audience_equals(claims, resource, now):
    return claims.get("aud") == resource and claims.get("exp", 0) > now


def any_valid_token(claims, resource, now):
    return claims.get("exp", 0) > now


def a_prefix(claims, resource, now):
    aud = claims.get("aud", [])
    return any(a.startswith(resource) for a in ([aud] if isinstance(aud, str) else aud)) and claims.get("exp", 0) > now


def substring_of_a_string(claims, resource, now):
    return resource in claims.get("aud", []) and claims.get("exp", 0) > now


def expiry_ignored(claims, resource, now):
    aud = claims.get("aud", [])
    return resource in ([aud] if isinstance(aud, str) else aud)


def expiry_inclusive(claims, resource, now):
    aud = claims.get("aud", [])
    return resource in ([aud] if isinstance(aud, str) else aud) and claims.get("exp", 0) >= now


def the_clock_instead_of_now(claims, resource, now):
    aud = claims.get("aud", [])
    return resource in ([aud] if isinstance(aud, str) else aud) and claims.get("exp", 0) > time.time()


def the_url_typed_in(claims, resource, now):
    aud = claims.get("aud", [])
    return "https://files.example/mcp" in ([aud] if isinstance(aud, str) else aud) and claims.get("exp", 0) > now


def no_exp_accepted(claims, resource, now):
    aud = claims.get("aud", [])
    return resource in ([aud] if isinstance(aud, str) else aud) and claims.get("exp", float("inf")) > now


def exp_read_with_brackets(claims, resource, now):
    aud = claims.get("aud", [])
    return resource in ([aud] if isinstance(aud, str) else aud) and claims["exp"] > now


def a_string_verdict(claims, resource, now):
    return "yes" if audience_equals(claims, resource, now) else "no"


TOKEN_WRONG = [
    ("aud compared as a string only", audience_equals, ["an audience list naming this server", "`aud` may be a list"],
     ["`aud` 可以是一个列表"]),
    ("any valid-looking token accepted", any_valid_token, ["issued for someone else", "confused deputy",
                                                           "token passthrough"], ["混淆代理（confused deputy）"]),
    ("a prefix of the audience", a_prefix, ["merely starts like ours", "not a prefix"], ["而不是前缀"]),
    ("`in` on a string audience", substring_of_a_string, ["merely starts like ours", "compare the whole audience"],
     ["要比较完整的受众"]),
    ("the expiry ignored", expiry_ignored, ["but expired", "exp 1799999999 is before now"], ["exp 1799999999 早于 now"]),
    ("exp >= now", expiry_inclusive, ["expiring this very second", "valid only while now < exp", "RFC 7519"],
     ["令牌只在 now < exp 时有效"]),
    # which round catches it depends on today's date; every round's message names the clock
    ("time.time() in place of now", the_clock_instead_of_now, ["the now you are given", "time.time()"],
     ["传入的 now", "time.time()"]),
    ("the resource typed into the function", the_url_typed_in, ["resource https://notes.example/mcp", "must be accepted",
                                                                "not a URL typed in"], ["不是写死的 URL"]),
    ("a token with no exp accepted", no_exp_accepted, ["with no expiry", "RFC 9068 makes exp required"],
     ["RFC 9068 规定 exp 必须有"]),
    ("exp read with brackets", exp_read_with_brackets, ["raised KeyError: 'exp'", "a claim may be missing"],
     ["某个声明（claim）可能缺失"]),
    ("'yes' instead of True", a_string_verdict, ["return True or False, not 'yes'"], ["请返回 True 或 False"]),
    ("answer = ... never set", ..., ["set answer = accept_token"], ["answer = accept_token"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in TOKEN_WRONG], ids=[row[0] for row in TOKEN_WRONG])
def test_accept_token_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_accept_token, answer, en, zh)


def with_a_set(claims, resource, now):
    """Another shape: any JSON shape of aud becomes a set; exp must be a number after now."""
    aud = claims.get("aud")
    audiences = {aud} if isinstance(aud, str) else set(aud or ())
    exp = claims.get("exp")
    return resource in audiences and isinstance(exp, (int, float)) and now < exp


def test_accept_token_other_right_answer_passes(corpus):
    corpus.right(check_accept_token, with_a_set)


def test_the_tokens_are_tried_for_other_resources_and_times():
    resources = {resource for resource, _ in CONTEXTS}
    times = [now for _, now in CONTEXTS]
    assert len(resources) == 2 and min(times) < time.time() < max(times)
    boundary = {name: make("r", 100)["exp"] for name, make, _ in TOKEN_CASES if "second" in name}
    assert sorted(boundary.values()) == [100, 101]
