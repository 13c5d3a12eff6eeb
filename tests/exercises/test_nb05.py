"""Wrong answers to notebook 05's exercises get a message that says what is wrong."""

from course_lib.exercises.nb05 import SOLUTIONS, check_retry_policy, check_should_retry, recorded_errors
from course_lib.retry import RetryPolicy


def test_the_recorded_errors_are_real_and_cover_every_code_but_one_kind_of_upstream():
    errors = recorded_errors()
    assert {e["code"] for e in errors.values()} == {
        "INVALID_INPUT", "FORBIDDEN", "NOT_FOUND", "UPSTREAM_ERROR", "TIMEOUT", "APPROVAL_REQUIRED", "CONFLICT"}  # fmt: skip
    assert errors["UPSTREAM_ERROR protocol"]["kind"] == "protocol" and not errors["UPSTREAM_ERROR protocol"]["retryable"]
    assert errors["UPSTREAM_ERROR transient"]["retryable"] and errors["TIMEOUT"]["retryable"]


def test_retrying_every_failure_is_stopped_at_the_first_invalid_input(capsys):
    assert check_should_retry(lambda error, is_write, has_key: True) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 1 (a read whose head was the text \"5\": INVALID_INPUT, retryable false")
    assert "the model must fix them, not repeat them" in out


def test_retrying_by_code_alone_misses_the_permanent_protocol_error(capsys):
    assert check_should_retry(lambda error, is_write, has_key: error["code"] in ("TIMEOUT", "UPSTREAM_ERROR")) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 4 (a read through a route to a tool the server does not have")
    assert "read the flag, not only the code" in out


def test_ignoring_writes_is_caught_on_a_write_without_a_key(capsys):
    assert check_should_retry(lambda error, is_write, has_key: error["retryable"]) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 9 (a write without an idempotency key that did not answer in time: TIMEOUT")
    assert "a retry could write twice" in out


def test_never_retrying_writes_is_told_about_idempotency_keys(capsys):
    assert check_should_retry(lambda error, is_write, has_key: error["retryable"] and not is_write) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 11 (a write with an idempotency key")
    assert "gets the stored result instead of writing twice" in out


def test_a_non_bool_verdict_and_a_crash_are_named(capsys):
    assert check_should_retry(lambda error, is_write, has_key: "yes") is False
    assert "you returned 'yes' (str); return True or False" in capsys.readouterr().out
    assert check_should_retry(lambda error, is_write, has_key: error["kind"] == "transient") is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 1") and "raised KeyError: 'kind'" in out


def test_a_starter_that_still_returns_ellipsis_is_not_answered(capsys):
    assert check_should_retry(lambda error, is_write, has_key: ...) is False
    assert capsys.readouterr().out.startswith("✗ Not answered yet")


def longest_waits(policy):
    """The two waits `policy` draws at the top of every random draw, as the check computes them."""
    from course_lib.exercises.nb05 import _Edge

    return [policy.delay(n, _Edge(True)) for n in (1, 2)]


def test_waits_that_add_up_past_the_limit_at_their_longest_are_named(capsys):
    policy = RetryPolicy(base_delay=0.2, factor=2, jitter=0.5)  # the first wait is never below 0.1 s
    assert check_retry_policy(policy) is False
    out = capsys.readouterr().out
    first, second = longest_waits(policy)
    assert out.startswith(f"✗ the longest waits your policy can draw, {first:g}s, {second:g}s, add up to "
                          f"{first + second:.3g}s; the limit is 0.5s whatever the draw")


def test_too_few_attempts_and_a_tight_budget_never_reach_success(capsys):
    assert check_retry_policy(RetryPolicy(max_attempts=2)) is False
    assert "max_attempts=2: the tool fails twice and works on the third attempt" in capsys.readouterr().out
    assert check_retry_policy(RetryPolicy(budget=0.5)) is False
    out = capsys.readouterr().out
    assert "with the longest waits your policy can draw" in out and "never succeeded" in out
    assert "time budget (0.5s of waiting)" in out


def test_a_first_wait_that_jitter_can_shrink_below_the_minimum_is_named(capsys):
    assert check_retry_policy(RetryPolicy(base_delay=0.1, factor=1.5, jitter=0.2, budget=0.5)) is False
    out = capsys.readouterr().out
    assert "the shortest wait your policy can draw before the first retry is 0.08s" in out
    assert "it must be at least 0.1s whatever the draw" in out


def test_too_many_attempts_no_jitter_and_a_wrong_type_are_refused_before_running(capsys):
    assert check_retry_policy(RetryPolicy(max_attempts=5)) is False
    assert "max_attempts=5: the constraint is at most 3 attempts" in capsys.readouterr().out
    assert check_retry_policy(RetryPolicy(base_delay=0.1, jitter=0)) is False
    assert "jitter=0: keep at least 0.1" in capsys.readouterr().out
    assert check_retry_policy({"max_attempts": 3}) is False
    assert "Pass a RetryPolicy(...)" in capsys.readouterr().out


def test_retrying_only_timeouts_is_told_to_read_the_flag(capsys):
    assert check_should_retry(lambda error, is_write, has_key: error["code"] == "TIMEOUT" and (has_key or not is_write)) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 6 (a read while the index restarts: UPSTREAM_ERROR, retryable true")
    assert "TIMEOUT is not the only failure that recovers" in out


def test_requiring_a_key_for_reads_is_told_a_read_needs_none(capsys):
    assert check_should_retry(lambda error, is_write, has_key: error["retryable"] and has_key) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 5 (a read that did not answer in time")
    assert "has_key matters only for writes" in out


def test_a_path_without_return_is_named(capsys):
    def forgot_a_return(error, is_write, has_key):
        if error["retryable"]:
            return has_key or not is_write

    assert check_should_retry(forgot_a_return) is False
    assert "should_retry returned None: one path through it has no return statement" in capsys.readouterr().out


def test_the_class_itself_and_full_jitter_are_named_and_a_cap_below_the_base_is_fine(capsys):
    assert check_retry_policy(RetryPolicy) is False
    assert "You passed the class RetryPolicy itself" in capsys.readouterr().out
    assert check_retry_policy(RetryPolicy(base_delay=0.15, factor=1, jitter=1.0)) is False
    assert "the shortest wait your policy can draw before the first retry is 0s" in capsys.readouterr().out
    # every wait is capped at max_delay: 0.15 s ± 20 %, so every constraint holds (the check used to refuse it)
    assert check_retry_policy(RetryPolicy(base_delay=1.0, max_delay=0.15, jitter=0.2, budget=0.5)) is True


def test_the_first_wait_hint_says_what_shrinks_it(capsys):
    assert check_retry_policy(RetryPolicy(base_delay=0.1, factor=1.5, jitter=0.2, budget=0.5)) is False
    assert "raise base_delay or lower jitter" in capsys.readouterr().out


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_the_not_answered_messages_follow_the_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert check_should_retry(lambda error, is_write, has_key: ...) is False
    assert check_retry_policy(...) is False
    assert capsys.readouterr().out == (
        "✗ Not answered yet: should_retry still returns ... — replace it with your rule.\n"
        "✗ Not answered yet: set policy = RetryPolicy(...) with your numbers.\n"
    )
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_should_retry(lambda error, is_write, has_key: ...) is False
    assert check_retry_policy(...) is False
    assert capsys.readouterr().out == (
        "✗ 还没有作答：should_retry 仍然返回 ...，请把它换成你的规则。\n"
        "✗ 还没有作答：用你选的数字设置 policy = RetryPolicy(...)。\n"
    )


def test_should_retry_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_should_retry(lambda error, is_write, has_key: True) is False
    assert capsys.readouterr().out == (
        '✗ 例子 1（一次 head 写成文本 "5" 的读取：INVALID_INPUT，retryable false；is_write=False，has_key=False）：'
        "你的判断是重试，但 retryable 为 false：同样的参数会再次违反同一条规则：模型必须修正它们，而不是重复它们。\n"
    )
    assert check_should_retry(lambda error, is_write, has_key: error["code"] in ("TIMEOUT", "UPSTREAM_ERROR")) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 例子 4（一次经由路由、指向服务器没有的工具的读取：UPSTREAM_ERROR，retryable false，kind protocol")
    assert "要看这个标志，而不只是看错误码" in out
    assert check_should_retry(lambda error, is_write, has_key: error["retryable"]) is False
    assert "这是一次没有幂等键的写入：第一次尝试可能已经写入了" in capsys.readouterr().out
    assert check_should_retry(lambda error, is_write, has_key: error["kind"] == "transient") is False
    assert "should_retry 抛出了 KeyError: 'kind'。这个 error 字典的键是 code, message, retryable。" in capsys.readouterr().out
    assert check_should_retry(SOLUTIONS["check_should_retry"]()) is True
    assert capsys.readouterr().out.startswith("✓ 在全部 36 个例子上，should_retry 都与课程的判定一致")


def test_retry_policy_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_retry_policy(RetryPolicy(base_delay=0.2, factor=2, jitter=0.5)) is False
    assert capsys.readouterr().out.startswith("✗ 按你的策略能抽到的最长等待 ")
    assert check_retry_policy(RetryPolicy(base_delay=0.1, factor=1.5, jitter=0.2, budget=0.5)) is False
    out = capsys.readouterr().out
    assert "第一次重试前能抽到的最短等待是 0.08s" in out and "它都必须至少是 0.1s" in out and "调低 jitter" in out
    assert check_retry_policy(RetryPolicy(max_attempts=5)) is False
    assert "max_attempts=5：约束是最多尝试 3 次" in capsys.readouterr().out
    assert check_retry_policy(RetryPolicy(budget=0.4)) is False
    assert "那个失败两次的工具始终没有成功" in capsys.readouterr().out
    assert check_retry_policy(SOLUTIONS["check_retry_policy"]()) is True
    assert capsys.readouterr().out.startswith("✓ 不管随机抽到什么：最迟第 3 次尝试成功")
