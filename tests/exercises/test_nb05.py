"""Wrong answers to notebook 05's exercises get a message that says what is wrong."""

from course_lib.exercises.nb05 import check_retry_policy, check_should_retry, recorded_errors
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
    assert "you returned 'yes'; return True or False" in capsys.readouterr().out
    assert check_should_retry(lambda error, is_write, has_key: error["kind"] == "transient") is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 1") and "raised KeyError: 'kind'" in out


def test_a_starter_that_still_returns_ellipsis_is_not_answered(capsys):
    assert check_should_retry(lambda error, is_write, has_key: ...) is False
    assert capsys.readouterr().out.startswith("✗ Not answered yet")


def test_the_default_policy_waits_too_long_in_total(capsys):
    assert check_retry_policy(RetryPolicy()) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ with seed 0 the waits 0.269s, 0.503s add up to 0.772s; the limit is 0.5s")


def test_too_few_attempts_and_a_tight_budget_never_reach_success(capsys):
    assert check_retry_policy(RetryPolicy(max_attempts=2)) is False
    assert "never succeeded" in capsys.readouterr().out
    assert check_retry_policy(RetryPolicy(budget=0.5)) is False
    out = capsys.readouterr().out
    assert "never succeeded" in out and "time budget (0.5s of waiting)" in out


def test_a_first_wait_that_jitter_can_shrink_below_the_minimum_is_named(capsys):
    assert check_retry_policy(RetryPolicy(base_delay=0.1, factor=1.5, jitter=0.2, budget=0.5)) is False
    out = capsys.readouterr().out
    assert "the first wait was" in out and "it must be at least 0.1s" in out


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


def test_the_class_itself_jitter_of_one_or_more_and_a_cap_below_the_base_are_named(capsys):
    assert check_retry_policy(RetryPolicy) is False
    assert "You passed the class RetryPolicy itself" in capsys.readouterr().out
    assert check_retry_policy(RetryPolicy(jitter=1.0)) is False
    assert "jitter=1 is a fraction of the delay" in capsys.readouterr().out
    assert check_retry_policy(RetryPolicy(base_delay=0.2, max_delay=0.1, jitter=0.1)) is False
    assert "max_delay=0.1 is below base_delay=0.2" in capsys.readouterr().out


def test_the_first_wait_hint_shows_the_lowest_possible_wait(capsys):
    assert check_retry_policy(RetryPolicy(base_delay=0.1, factor=1.5, jitter=0.2, budget=0.5)) is False
    assert "0.1·(1 − 0.2) = 0.08s" in capsys.readouterr().out
