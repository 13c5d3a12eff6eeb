"""Wrong answers to notebook 03c's exercises get a message that says what is wrong."""

from course_lib.exercises.nb03c import check_accept_token, check_session_to_send, real_recordings


def test_the_recordings_are_real_and_differ_the_way_the_eras_do():
    in_use, ended, stateless, forgotten, renewed = real_recordings().values()
    assert in_use[0].jsonrpc_method == "initialize" and "mcp-session-id" in in_use[0].response_headers
    assert ended[-1].method == "DELETE" and ended[-1].status == 200
    assert [h.jsonrpc_method for h in stateless] == ["tools/list"]
    assert all("mcp-session-id" not in h.response_headers for h in stateless)
    assert forgotten[-1].status == 404 and forgotten[-1].jsonrpc_method == "tools/list"
    ids = [h.response_headers.get("mcp-session-id") for h in renewed if h.jsonrpc_method == "initialize"]
    assert len(set(ids)) == 2 and renewed[3].method == "DELETE"


def _from_request_headers(http):
    return http[-1].request_headers.get("mcp-session-id")


def _first_response(http):
    return http[0].response_headers.get("mcp-session-id")


def test_reading_the_first_request_instead_of_its_response_is_named(capsys):
    assert check_session_to_send(lambda http: http[0].request_headers.get("mcp-session-id")) is False
    assert "carried mcp-session-id in its *response* headers" in capsys.readouterr().out


def test_sending_the_id_of_a_deleted_session_is_named(capsys):
    assert check_session_to_send(_first_response) is False
    out = capsys.readouterr().out
    assert "ended with DELETE: the session is over" in out and "404" in out


def test_copying_the_last_request_header_also_misses_the_delete(capsys):
    assert check_session_to_send(_from_request_headers) is False
    assert "the session is over" in capsys.readouterr().out


def test_a_crash_on_a_missing_header_is_reported(capsys):
    def crashes_when_stateless(http):
        return None if http[-1].method == "DELETE" else http[0].response_headers["mcp-session-id"]

    assert check_session_to_send(crashes_when_stateless) is False
    assert capsys.readouterr().out.startswith("✗ session_to_send raised KeyError")


def _audience_equals(claims, resource, now):
    return claims.get("aud") == resource and claims["exp"] > now


def test_an_audience_list_must_be_understood(capsys):
    assert check_accept_token(_audience_equals) is False
    assert "`aud` may be a list" in capsys.readouterr().out


def test_accepting_any_valid_token_is_the_confused_deputy(capsys):
    assert check_accept_token(lambda claims, resource, now: claims.get("exp", 0) > now) is False
    assert "confused deputy" in capsys.readouterr().out


def test_a_prefix_match_is_named(capsys):
    def prefix(claims, resource, now):
        aud = claims.get("aud", [])
        return any(a.startswith(resource) for a in ([aud] if isinstance(aud, str) else aud)) and claims["exp"] > now

    assert check_accept_token(prefix) is False
    assert "not a prefix" in capsys.readouterr().out


def test_ignoring_expiry_is_refused(capsys):
    def no_expiry(claims, resource, now):
        aud = claims.get("aud", [])
        return resource in ([aud] if isinstance(aud, str) else aud)

    assert check_accept_token(no_expiry) is False
    assert "expired" in capsys.readouterr().out


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_the_not_answered_messages_follow_the_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert check_session_to_send(...) is False
    assert check_accept_token(...) is False
    assert capsys.readouterr().out == (
        "✗ Not answered yet: define session_to_send(http), then set answer = session_to_send (the function itself, without parentheses) "
        "and run the cell again.\n"
        "✗ Not answered yet: define accept_token(claims, resource, now), then set answer = accept_token (the function itself, without parentheses) "
        "and run the cell again.\n"
    )
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_session_to_send(...) is False
    assert check_accept_token(...) is False
    assert capsys.readouterr().out == (
        "✗ 还没有作答：定义 session_to_send(http)，然后写 answer = session_to_send（函数本身，不带括号），再运行这个单元格。\n"
        "✗ 还没有作答：定义 accept_token(claims, resource, now)，然后写 answer = accept_token（函数本身，不带括号），再运行这个单元格。\n"
    )


def test_session_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_session_to_send(lambda http: http[0].request_headers.get("mcp-session-id")) is False
    assert capsys.readouterr().out.startswith(
        "✗ 一个使用中的 2025-11-25 会话：你返回了 None，但服务器开启了一个会话：它对 initialize 的答复在*响应*头部里带着 mcp-session-id")
    assert check_session_to_send(_first_response) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 一个客户端已用 DELETE 结束的 2025-11-25 会话：会话已经结束（DELETE 的答复是 200）")
    assert "再发送它的 id 会得到 404。请返回 None" in out


def test_token_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_accept_token(lambda claims, resource, now: claims.get("exp", 0) > now) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 为另一个 API（用户的日历）签发的令牌（{'aud': 'https://calendar.example/api'")
    assert "本服务器就成了混淆代理（confused deputy）" in out and "令牌透传（token passthrough）" in out
    assert check_accept_token(_audience_equals) is False
    assert "必须被接受：`aud` 可以是一个列表" in capsys.readouterr().out
    assert check_accept_token(lambda claims, resource, now: "yes") is False
    assert "请返回 True 或 False，而不是 'yes'。" in capsys.readouterr().out


def test_the_recordings_are_named_in_the_editions_language(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert list(real_recordings()) == [
        "a 2025-11-25 session in use", "a 2025-11-25 session the client ended with DELETE", "stateless 2026-07-28 requests",
        "a 2025-11-25 session the server no longer knows (404)", "a session ended with DELETE, then a new one"]
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    recordings = real_recordings()
    assert list(recordings) == ["一个使用中的 2025-11-25 会话", "一个客户端已用 DELETE 结束的 2025-11-25 会话", "无状态的 2026-07-28 请求",
                                "一个服务器已经不认识的 2025-11-25 会话（404）", "一个用 DELETE 结束的会话，然后是一个新会话"]
    assert recordings["一个客户端已用 DELETE 结束的 2025-11-25 会话"][-1].method == "DELETE"
    # the Chinese names change nothing the check decides: the reference solution passes, a wrong one fails
    from course_lib.exercises.nb03c import SOLUTIONS
    assert check_session_to_send(SOLUTIONS["check_session_to_send"]()) is True
    assert capsys.readouterr().out == "✓ 全部 5 段记录：下一次请求要带的 Mcp-Session-Id（或者不带）都对了。\n"
    assert check_session_to_send(lambda http: "0" * 32) is False
    assert capsys.readouterr().out.startswith("✗ 一个使用中的 2025-11-25 会话：下一次请求需要 ")
