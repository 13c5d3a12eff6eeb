"""The notebook 10 drill checks name the specific thing a wrong answer gets wrong."""

import asyncio
import json
import uuid

import anyio

from course_lib.approval import IdempotencyConflict
from course_lib.drills import SOLUTION
from course_lib.exercises import nb10


def run(check, answer, capsys):
    result = check(answer)
    out = capsys.readouterr().out
    assert result is False and out.startswith("✗") and out.count("\n") == 1
    return out


# ---- drill 1: pair_call_ids -------------------------------------------------------------------


def calls_and_outputs(items):
    return ([i for i in items if i.get("type") == "function_call"],
            [i for i in items if i.get("type") == "function_call_output"])


def test_pairing_by_position_is_caught_when_outputs_arrive_in_finishing_order(capsys):
    def by_position(items):
        calls, outputs = calls_and_outputs(items)
        return {c["call_id"]: o["output"] for c, o in zip(calls, outputs)}

    out = run(nb10.check_pair_call_ids, by_position, capsys)
    assert "outputs in the order the reads finished" in out
    assert "(read /workspace/notes.txt) got the output of" in out and "never by position" in out


def test_an_orphan_output_must_be_refused_and_the_api_refuses_it_too(capsys):
    def no_checks(items):
        calls, outputs = calls_and_outputs(items)
        texts = {o["call_id"]: o["output"] for o in outputs}
        return {c["call_id"]: texts[c["call_id"]] for c in calls}

    out = run(nb10.check_pair_call_ids, no_checks, capsys)
    assert "call_never_made" in out and "Raise ValueError" in out and "No tool call found" in out


def test_a_call_id_on_two_calls_must_be_refused_even_if_the_api_lets_it_pass(capsys):
    def orphans_and_missing_only(items):
        calls, outputs = calls_and_outputs(items)
        ids = {c["call_id"] for c in calls}
        if any(o["call_id"] not in ids for o in outputs) or ids != {o["call_id"] for o in outputs}:
            raise ValueError("orphan or missing")
        return {o["call_id"]: o["output"] for o in outputs}

    out = run(nb10.check_pair_call_ids, orphans_and_missing_only, capsys)
    assert "one call_id on two different calls" in out and "The API may not notice: your app must" in out


def test_refusing_a_valid_list_is_explained(capsys):
    def refuse_messages(items):
        if any("role" in i for i in items):
            raise ValueError("not a call")
        return {}

    out = run(nb10.check_pair_call_ids, refuse_messages, capsys)
    assert "this list is valid" in out and "Items of other types (messages) are not calls" in out


def test_a_value_instead_of_the_function_is_named(capsys):
    assert "Pass the function itself" in run(nb10.check_pair_call_ids, {"call_1": "text"}, capsys)


# ---- drill 2: action_id ------------------------------------------------------------------------


def test_an_id_that_depends_on_key_order_blocks_the_approved_action(capsys):
    out = run(nb10.check_action_id, lambda t, a, u: f"{t}|{json.dumps(a)}|{u}", capsys)
    assert "case 'A with its keys in another order'" in out and "stopped at APPROVAL_REQUIRED" in out
    assert "sort_keys=True" in out


def test_an_id_without_the_user_lets_bob_write_on_alices_approval(capsys):
    out = run(nb10.check_action_id, lambda t, a, u: f"{t}|{json.dumps(a, sort_keys=True)}", capsys)
    assert "sent by bob" in out and "a write nobody approved happened" in out and "ignores the user" in out


def test_an_id_without_the_tool_lets_a_delete_run_on_a_save_approval(capsys):
    out = run(nb10.check_action_id, lambda t, a, u: f"{json.dumps(a, sort_keys=True)}|{u}", capsys)
    assert "delete_learning_gap" in out and "ignores the tool" in out


def test_top_level_sorting_only_misses_nested_key_order(capsys):
    out = run(nb10.check_action_id, lambda t, a, u: f"{t}|{sorted(a.items())}|{u}", capsys)
    assert "keys inside evidence in another order" in out


def test_a_random_id_is_not_stable(capsys):
    out = run(nb10.check_action_id, lambda t, a, u: str(uuid.uuid4()), capsys)
    assert "case 'A again, exactly'" in out and "don't use random values" in out


def test_an_id_from_some_arguments_only_is_caught(capsys):
    out = run(nb10.check_action_id, lambda t, a, u: f"{t}|{a['topic']}|{u}", capsys)
    assert "another note inside evidence" in out and "the values inside evidence" in out
    out = run(nb10.check_action_id, lambda t, a, u: f"{t}|{a['topic']}|{json.dumps(a['evidence'], sort_keys=True)}|{u}",
              capsys)  # fmt: skip
    assert "case 'another priority'" in out and "hash every argument (priority too)" in out
    def flat(value):  # every value as str(): sorted at every level, the JSON types lost
        return sorted((k, flat(v)) for k, v in value.items()) if isinstance(value, dict) else str(value)

    out = run(nb10.check_action_id, lambda t, a, u: f"{t}|{flat(a)}|{u}", capsys)
    assert "line 12 (a number)" in out and "JSON types" in out


def test_a_non_string_id_is_refused(capsys):
    assert "must return a non-empty str" in run(nb10.check_action_id, lambda t, a, u: 5, capsys)


def test_the_learners_ids_really_decide_in_the_executor():
    ran, executions = nb10.play_approval(lambda t, a, u: "same-for-everything", nb10.ACTION_CASES[5][1])
    assert ran and executions[0].error_code == "APPROVAL_REQUIRED" and executions[1].ok


# ---- drill 3: idempotency store ----------------------------------------------------------------


class KeyOnly:
    def __init__(self):
        self.results = {}

    async def run(self, key, arguments, write):
        if key in self.results:
            return self.results[key], True
        result = await write()
        self.results[key] = result
        return result, False


class NoStore:
    async def run(self, key, arguments, write):
        return await write(), False


class TextFingerprint:
    def __init__(self):
        self.results = {}

    async def run(self, key, arguments, write):
        if key in self.results:
            if self.results[key][0] != json.dumps(arguments):
                raise IdempotencyConflict(key)
            return self.results[key][1], True
        result = await write()
        self.results[key] = (json.dumps(arguments), result)
        return result, False


class NoLock(TextFingerprint):
    async def run(self, key, arguments, write):
        if key in self.results:
            if self.results[key][0] != arguments:
                raise IdempotencyConflict(key)
            return self.results[key][1], True
        result = await write()
        self.results[key] = (arguments, result)
        return result, False


class Placeholder(TextFingerprint):
    locks: dict = {}

    async def run(self, key, arguments, write):
        async with self.locks.setdefault((id(self), key), anyio.Lock()):
            if key in self.results:
                if self.results[key][0] != arguments:
                    raise IdempotencyConflict(key)
                return self.results[key][1], True
            self.results[key] = (arguments, None)  # reserved before writing: a failure leaves it behind
            result = await write()
            self.results[key] = (arguments, result)
            return result, False


def test_a_store_that_ignores_the_arguments_misses_the_conflict(capsys):
    out = run(nb10.check_idempotency_store, KeyOnly, capsys)
    assert "the same key with other arguments" in out and "raise IdempotencyConflict" in out


def test_no_store_at_all_writes_twice_after_a_timeout(capsys):
    out = run(nb10.check_idempotency_store, NoStore, capsys)
    assert "a retry after a timeout" in out and "2 records for one request" in out and "(attempts TIMEOUT, ok)" in out


def test_comparing_arguments_as_raw_text_breaks_on_key_order(capsys):
    out = run(nb10.check_idempotency_store, TextFingerprint, capsys)
    assert "another key order" in out and "only the key order differs" in out


def test_concurrent_duplicates_need_a_lock(capsys):
    out = run(nb10.check_idempotency_store, NoLock, capsys)
    assert "at the same time" in out and "both ran write() (2 writes)" in out and "anyio.Lock" in out


def test_a_failed_write_must_not_be_replayed(capsys):
    out = run(nb10.check_idempotency_store, Placeholder, capsys)
    assert "a write that failed" in out and "Store a result only after write() returned" in out


def test_a_sync_run_and_a_wrong_exception_are_named(capsys):
    class Sync:
        def run(self, key, arguments, write):
            return None

    class WrongError(NoLock):
        async def run(self, key, arguments, write):
            try:
                return await super().run(key, arguments, write)
            except IdempotencyConflict:
                raise KeyError("conflict") from None

    assert "async def run" in run(nb10.check_idempotency_store, Sync, capsys)
    assert "it raised KeyError" in run(nb10.check_idempotency_store, WrongError, capsys)


# ---- drill 4: next_step ------------------------------------------------------------------------

BY_CODE = {"INVALID_INPUT": "fix_arguments", "NOT_FOUND": "search_again", "CONFLICT": "reread",
           "APPROVAL_REQUIRED": "wait_for_approval", "FORBIDDEN": "stop", "TIMEOUT": "retry", "UPSTREAM_ERROR": "retry"}


def test_deciding_by_code_alone_misses_a_permanent_upstream_error(capsys):
    out = run(nb10.check_next_step, lambda e, w, k: BY_CODE[e["code"]], capsys)
    assert "route to a tool the server does not have" in out and "the retryable flag says" in out


def test_retrying_a_write_without_a_key_is_caught(capsys):
    def no_write_awareness(e, w, k):
        return "stop" if e["code"] == "UPSTREAM_ERROR" and not e["retryable"] else BY_CODE[e["code"]]

    out = run(nb10.check_next_step, no_write_awareness, capsys)
    assert "write without an idempotency key" in out and "'check_status'" in out and "Query the state" in out


def test_retryable_alone_is_not_a_next_step(capsys):
    out = run(nb10.check_next_step, lambda e, w, k: "retry" if e["retryable"] else "stop", capsys)
    assert "case 1" in out and "'fix_arguments'" in out


def test_an_unknown_step_is_named(capsys):
    assert "next_step returned bool True. Return one of NEXT_STEPS" in run(nb10.check_next_step, lambda e, w, k: True, capsys)
    assert "'stop!' is not a next step" in run(nb10.check_next_step, lambda e, w, k: "stop!", capsys)


def test_the_reference_agrees_with_the_course_retry_verdict():
    from course_lib.exercises.nb05 import expected_retry

    errors = nb10.step_errors()
    for label, _, is_write, has_key in nb10.STEP_CASES:
        step = nb10.SOLUTIONS["check_next_step"]()(errors[label], is_write, has_key)
        assert (step == "retry") == expected_retry(errors[label], is_write, has_key), label


# ---- drill 5: run_turn -------------------------------------------------------------------------


async def sequential(calls, execute, is_write):
    return [await execute(call) for call in calls]


async def everything_at_once(calls, execute, is_write):
    return list(await asyncio.gather(*(execute(call) for call in calls)))


async def reads_first(calls, execute, is_write):
    done = {}
    reads = [c for c in calls if not is_write(c)]
    for call, result in zip(reads, await asyncio.gather(*(execute(c) for c in reads))):
        done[call.call_id] = result
    for call in calls:
        if is_write(call):
            done[call.call_id] = await execute(call)
    return [done[c.call_id] for c in calls]


async def in_finishing_order(calls, execute, is_write):
    finished = []

    async def one(call):
        finished.append(await execute(call))

    async with anyio.create_task_group() as tg:
        for call in calls:
            tg.start_soon(one, call)
    return finished


def test_one_at_a_time_is_seen_in_the_event_order(capsys):
    out = run(nb10.check_run_turn, sequential, capsys)
    assert "case 'three reads from the model'" in out and "ran one after another" in out


def test_running_a_write_beside_reads_is_seen(capsys):
    out = run(nb10.check_run_turn, everything_at_once, capsys)
    assert "ran while the write call_w1 was running" in out


def test_reads_first_breaks_the_model_order_around_a_write(capsys):
    out = run(nb10.check_run_turn, reads_first, capsys)
    assert "call_r2 started before call_w1 had finished" in out and "Keep the model's order" in out


def test_results_in_finishing_order_are_caught(capsys):
    out = run(nb10.check_run_turn, in_finishing_order, capsys)
    assert "return the results in the model's order" in out


def test_a_sync_scheduler_is_refused(capsys):
    assert "must be an async def" in run(nb10.check_run_turn, lambda calls, execute, is_write: [], capsys)


def test_the_scheduler_runs_against_the_real_files_server():
    calls = nb10.schedule_cases()["three reads from the model"]
    turn = nb10.run_scheduler(nb10.SOLUTIONS["check_run_turn"](), calls)
    assert [e.result["data"]["path"] for e in turn.results] == [json.loads(c.arguments)["path"] for c in calls]
    assert [kind for kind, _ in turn.events] == ["start"] * 3 + ["end"] * 3


# ---- drill 6: parse_arguments ------------------------------------------------------------------


def test_plain_json_loads_lets_the_last_duplicate_win(capsys):
    out = run(nb10.check_parse_arguments, json.loads, capsys)
    assert "a duplicate key" in out and "'/etc/passwd'" in out and "object_pairs_hook" in out


def test_refusing_duplicates_but_not_nan_is_caught(capsys):
    def no_duplicates(text):
        def pairs(items):
            if len({k for k, _ in items}) != len(items):
                raise ValueError("duplicate")
            return dict(items)

        value = json.loads(text, object_pairs_hook=pairs)
        if not isinstance(value, dict):
            raise ValueError("not an object")
        return value

    out = run(nb10.check_parse_arguments, no_duplicates, capsys)
    assert "NaN inside a list" in out and "parse_constant" in out


def test_forgetting_the_object_check_is_caught(capsys):
    def strict_numbers(text):
        def pairs(items):
            if len({k for k, _ in items}) != len(items):
                raise ValueError("duplicate")
            return dict(items)

        def constant(token):
            raise ValueError(token)

        return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)

    out = run(nb10.check_parse_arguments, strict_numbers, capsys)
    assert "an array instead of an object" in out and "isinstance(value, dict)" in out


def test_raw_decode_without_skipping_whitespace_is_explained(capsys):
    def raw(text):
        return json.JSONDecoder().raw_decode(text)[0]

    out = run(nb10.check_parse_arguments, raw, capsys)
    assert "spaces and a newline around it" in out and "whitespace around the value" in out


# ---- diagnose the trace ------------------------------------------------------------------------


def answers(**changes):
    return {**SOLUTION, **changes}


def test_a_consequence_chosen_as_the_row_is_explained(capsys):
    out = run(nb10.check_diagnoses, answers(result_not_sent=("G", "loop count")), capsys)
    assert "result_not_sent: not row G" in out and "look at what request 2 carried" in out


def test_the_right_row_with_the_wrong_first_check_is_explained(capsys):
    out = run(nb10.check_diagnoses, answers(call_id_swap=("D", "full context")), capsys)
    assert "row D is right, but check 'call_id' first" in out


def test_a_check_from_another_row_is_refused(capsys):
    out = run(nb10.check_diagnoses, answers(wrong_tool=("B", "call_id")), capsys)
    assert "not one of row B's checks: tool names, counter-examples, dynamic tool set" in out


def test_a_dropped_failure_is_not_an_over_reach(capsys):
    out = run(nb10.check_diagnoses, answers(error_as_success=("H", "identity")), capsys)
    assert "the server refused the read (isError true)" in out


def test_missing_and_malformed_answers_are_named(capsys):
    assert "blind_retry still needs" in run(nb10.check_diagnoses, answers(blind_retry=("F", ...)), capsys)
    assert "'Z' is not a row" in run(nb10.check_diagnoses, answers(injection=("Z", "identity")), capsys)
    assert "is not a trace" in run(nb10.check_diagnoses, answers(nonsense=("A", "call trace")), capsys)


# ---- drill 8: the Responses loop from scratch ------------------------------------------------------


def _loop(send_back, *, budget=True, status=False):
    """A learner's run_loop; `send_back(response, calls, execute)` builds the items appended each turn."""

    def run_loop(client, model, task, tools, execute, max_steps=5):
        items = [{"role": "user", "content": task}]
        steps = range(max_steps) if budget else iter(int, 1)
        for _ in steps:
            response = client.responses.create(model=model, input=items, tools=tools)
            if status and response.status != "completed":
                raise RuntimeError(response.status)
            calls = [item for item in response.output if item.type == "function_call"]
            if not calls:
                return response.output_text
            items += send_back(response, calls, execute)
        raise RuntimeError("budget")

    return run_loop


def _outputs(calls, execute, key="call_id"):
    return [{"type": "function_call_output", "call_id": getattr(c, key), "output": execute(c)} for c in calls]


def test_the_reference_loop_passes(capsys):
    assert nb10.check_responses_loop(nb10.SOLUTIONS["check_responses_loop"]()) is True
    assert capsys.readouterr().out.startswith("✓ the loop sends the whole context")


def test_each_wrong_loop_is_told_its_own_mistake(capsys):
    everything = lambda r, calls, ex: [i.to_dict() for i in r.output] + _outputs(calls, ex)  # noqa: E731
    wrong = {
        "only output[0]": (lambda r, calls, ex: [i.to_dict() for i in r.output] + _outputs(calls[:1], ex),
                           "run every call of the response (walk all of response.output, not output[0])"),
        "outputs without the calls": (lambda r, calls, ex: _outputs(calls, ex),
                                      "append every item of response.output to the input first"),
        "item.id for call_id": (lambda r, calls, ex: [i.to_dict() for i in r.output] + _outputs(calls, ex, "id"),
                                "that is the item's id (fc_…), not its call_id"),
        "model_dump": (lambda r, calls, ex: [i.model_dump() for i in r.output] + _outputs(calls, ex),
                       "item.model_dump() adds fields the API refuses"),
        "an object as output": (lambda r, calls, ex: [i.to_dict() for i in r.output]
                                + [{"type": "function_call_output", "call_id": c.call_id, "output": {"t": ex(c)}}
                                   for c in calls], "function_call_output.output is text"),
        "only the first call and its output": (lambda r, calls, ex: [calls[0].to_dict(), *_outputs(calls[:1], ex)],
                                               "the response held two function_call items: run both"),
    }  # fmt: skip
    for name, (send_back, says) in wrong.items():
        assert nb10.check_responses_loop(_loop(send_back, status=True)) is False
        assert says in capsys.readouterr().out, name
    assert nb10.check_responses_loop(_loop(everything, budget=False, status=True)) is False
    assert "your loop was still asking after 8 requests; stop after max_steps (3)" in capsys.readouterr().out
    assert nb10.check_responses_loop(_loop(everything)) is False  # no look at response.status
    assert "check response.status: 'incomplete'" in capsys.readouterr().out


def test_a_loop_that_returns_the_response_is_told_to_return_text(capsys):
    def returns_response(client, model, task, tools, execute, max_steps=5):
        return client.responses.create(model=model, input=task, tools=tools)

    assert nb10.check_responses_loop(returns_response) is False
    assert "return the final answer text (response.output_text)" in capsys.readouterr().out
    assert nb10.check_responses_loop(...) is False
    assert capsys.readouterr().out.startswith("✗ Not answered yet: define run_loop(")


def test_a_wrong_move_is_told_what_that_move_is_for(capsys):
    out = run(nb10.check_next_step, lambda e, w, k: "retry", capsys)  # "just retry everything"
    assert out.startswith("✗ case 1 (a read whose head was the text \"5\"")
    assert "you said 'retry', the move for a failure that can recover (retryable true) where repeating is safe" in out
    out = run(nb10.check_next_step, lambda e, w, k: "fix_arguments" if e["code"] == "NOT_FOUND" else
              nb10.SOLUTIONS["check_next_step"]()(e, w, k), capsys)  # fmt: skip
    assert "you said 'fix_arguments', the move for INVALID_INPUT only; the next step is 'search_again'" in out


def test_parse_mistakes_learners_write_are_named(capsys):
    import ast

    def literal(text):
        value = ast.literal_eval(text.strip()) if isinstance(text, str) and text.strip() else None
        if not isinstance(value, dict):
            raise ValueError("not an object")
        return value

    out = run(nb10.check_parse_arguments, literal, capsys)
    assert "JSON has null, true and false: parse it with json.loads (ast.literal_eval and eval read Python" in out

    def quote_replace(text):  # turns single quotes into double ones before parsing
        return nb10.SOLUTIONS["check_parse_arguments"]()(text.replace("'", '"') if isinstance(text, str) else text)

    assert "JSON strings use double quotes" in run(nb10.check_parse_arguments, quote_replace, capsys)

    def swallow(text):
        try:
            return nb10.SOLUTIONS["check_parse_arguments"]()(text)
        except ValueError:
            return {}

    out = run(nb10.check_parse_arguments, swallow, capsys)
    assert "you returned {}; refuse it with ValueError. Returning an empty dict on a parse error hides" in out

    def empty_is_defaults(text):
        return {} if text == "" else nb10.SOLUTIONS["check_parse_arguments"]()(text)

    out = run(nb10.check_parse_arguments, empty_is_defaults, capsys)
    assert "an empty text is not {}: a model that sent nothing did not ask for the defaults" in out


def test_pairing_on_the_item_id_or_reading_type_off_a_message_is_named(capsys):
    def by_item_id(items):
        calls = {i["id"]: i for i in items if i.get("type") == "function_call"}
        return {i["id"]: i["output"] for i in items if i.get("type") == "function_call_output" and calls}

    out = run(nb10.check_pair_call_ids, by_item_id, capsys)
    assert "outputs have no 'id': pair on 'call_id'" in out

    def assumes_type(items):
        return {i["call_id"]: i["output"] for i in items if i["type"] == "function_call_output"}

    out = run(nb10.check_pair_call_ids, assumes_type, capsys)
    assert "a message has a 'role' and no 'type': use item.get('type')" in out


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------

import re  # noqa: E402
from pathlib import Path  # noqa: E402

from course_lib.exercises.nb10 import _common  # noqa: E402
from course_lib.exercises.nb10.action_id import ACTION_CASES  # noqa: E402
from course_lib.exercises.nb10.idempotency import check_idempotency_store  # noqa: E402
from course_lib.exercises.nb10.next_step import STEP_CASES  # noqa: E402
from course_lib.exercises.nb10.pairing import pairing_cases  # noqa: E402
from course_lib.exercises.nb10.parser import parse_cases  # noqa: E402
from course_lib.exercises.nb10.responses_loop import CASES as LOOP_CASES  # noqa: E402
from course_lib.exercises.nb10.scheduler import schedule_cases  # noqa: E402

IDEMPOTENCY_LABELS = ["one call", "a retry after a timeout", "the same key, the same arguments in another key order",
                      "the same key with other arguments", "two different keys",
                      "two calls with the same key at the same time", "a write that failed, then the same key again"]



def chinese(out):
    """A Chinese message: it starts with ✗, says something in Chinese, and has no English sentence in it."""
    assert out.startswith("✗ ") and re.search("[\u4e00-\u9fff]{4}", out), out
    return out


def test_every_case_label_of_every_drill_has_chinese():
    everything = [*pairing_cases(), *(label for label, _, _ in ACTION_CASES), *IDEMPOTENCY_LABELS,
                  *(what for _, what, _, _ in STEP_CASES), *schedule_cases(), *(label for label, _ in parse_cases()),
                  *LOOP_CASES]  # fmt: skip
    generated = [label for label in everything if isinstance(label, tuple)]  # (English, 中文): they carry their own
    assert generated and all(re.search("[\u4e00-\u9fff]", zh) or zh.startswith("[") for _, zh in generated)
    labels = [label for label in everything if not isinstance(label, tuple)]
    assert [label for label in labels if label not in _common.CASE_LABELS_ZH] == []
    assert set(_common.CASE_LABELS_ZH) == set(labels)  # no label translated that no drill has
    assert all(re.search("[\u4e00-\u9fff]", zh) for zh in _common.CASE_LABELS_ZH.values())
    source = Path(nb10.idempotency.__file__).read_text(encoding="utf-8")  # the labels written inline there
    assert all(f'"{label}"' in source or f"'{label}'" in source for label in IDEMPOTENCY_LABELS)


def test_chinese_pairing_messages_for_real_wrong_answers(zh, capsys):
    def by_position(items):
        calls, outputs = calls_and_outputs(items)
        return {c["call_id"]: o["output"] for c, o in zip(calls, outputs)}

    out = chinese(run(nb10.check_pair_call_ids, by_position, capsys))
    assert "用例“同一轮，输出按读取完成的先后排列”：" in out and "（读取 /workspace/notes.txt） 拿到了 " in out
    assert "要按 call_id 配对，绝不能按位置。" in out

    def no_checks(items):
        calls, outputs = calls_and_outputs(items)
        texts = {o["call_id"]: o["output"] for o in outputs}
        return {c["call_id"]: texts[c["call_id"]] for c in calls}

    out = chinese(run(nb10.check_pair_call_ids, no_checks, capsys))
    assert "来了一个属于 call_never_made 的输出" in out and "请抛出 ValueError。Responses API 也会拒绝它：" in out
    assert "No tool call found" in out  # what the model API said, quoted as it said it

    def assumes_type(items):
        return {i["call_id"]: i["output"] for i in items if i["type"] == "function_call_output"}

    assert "消息有 'role'，没有 'type'：用 item.get('type')。" in chinese(run(nb10.check_pair_call_ids, assumes_type, capsys))
    assert "请传入函数本身（pair_call_ids，不带括号）" in chinese(run(nb10.check_pair_call_ids, {"call_1": "text"}, capsys))
    assert chinese(run(nb10.check_pair_call_ids, ..., capsys)).startswith("✗ 还没有作答：定义 pair_call_ids(items)，然后写 answer")


def test_chinese_action_id_messages_for_real_wrong_answers(zh, capsys):
    out = chinese(run(nb10.check_action_id, lambda t, a, u: f"{t}|{json.dumps(a)}|{u}", capsys))
    assert "用例“A，键的顺序不同”：alice 批准了 A，这次调用却停在了 APPROVAL_REQUIRED" in out and "sort_keys=True" in out
    out = chinese(run(nb10.check_action_id, lambda t, a, u: f"{t}|{json.dumps(a, sort_keys=True)}", capsys))
    assert "用例“同样的参数，由 bob 发出”" in out and "你的 id 没有考虑到用户：alice 给出的批准绝不能授权 bob" in out
    out = chinese(run(nb10.check_action_id, lambda t, a, u: str(uuid.uuid4()), capsys))
    assert "同一个动作得到了两个不同的 id" in out and "不要用随机值、时间或 id()" in out
    assert "action_id 必须返回非空的 str" in chinese(run(nb10.check_action_id, lambda t, a, u: 5, capsys))


def test_chinese_idempotency_messages_for_real_wrong_answers(zh, capsys):
    out = chinese(run(check_idempotency_store, NoStore, capsys))
    assert "用例“超时之后的重试”：第一次尝试存下了记录，然后超时；重试又写了一次" in out
    out = chinese(run(check_idempotency_store, KeyOnly, capsys))
    assert "用例“同一个键，不同的参数”" in out and "抛出 IdempotencyConflict" in out
    out = chinese(run(check_idempotency_store, TextFingerprint, capsys))
    assert "用例“同一个键，同样的参数，键的顺序不同”" in out
    out = chinese(run(check_idempotency_store, NoLock, capsys))
    assert "用例“同一个键的两次调用同时到达”" in out and "anyio.Lock" in out
    out = chinese(run(check_idempotency_store, Placeholder, capsys))
    assert "用例“一次失败的写入，然后同一个键再来一次”" in out
    assert chinese(run(check_idempotency_store, ..., capsys)).startswith("✗ 还没有作答：写出这个类")


def test_chinese_next_step_messages_for_real_wrong_answers(zh, capsys):
    out = chinese(run(nb10.check_next_step, lambda e, w, k: "retry", capsys))
    assert out.startswith("✗ 用例 1（一次 head 为文本 \"5\" 的读取：INVALID_INPUT，retryable false；is_write=False")
    assert "你选的是 'retry'（它适用于：可以恢复（retryable 为 true）且重复执行安全的失败）；下一步应该是 'fix_arguments'" in out
    out = chinese(run(nb10.check_next_step, lambda e, w, k: BY_CODE[e["code"]], capsys))
    assert "路由指向服务器上并不存在的工具" in out and "能不能恢复，要看 retryable 标志" in out
    assert "next_step 返回了 bool True。请返回 NEXT_STEPS 中的一个" in chinese(run(nb10.check_next_step, lambda e, w, k: True, capsys))


def test_chinese_scheduler_messages_for_real_wrong_answers(zh, capsys):
    out = chinese(run(nb10.check_run_turn, sequential, capsys))
    assert "用例“模型发来的三次读取”：读取" in out and "是一个接一个运行的" in out
    out = chinese(run(nb10.check_run_turn, everything_at_once, capsys))
    assert "也在运行。写入要单独运行" in out
    assert "run_turn 必须是 async def" in chinese(run(nb10.check_run_turn, lambda c, e, w: [], capsys))


def test_chinese_parser_messages_for_real_wrong_answers(zh, capsys):
    out = chinese(run(nb10.check_parse_arguments, json.loads, capsys))
    assert "用例“重复的键”" in out and "json.loads 会悄悄保留最后一个重复的键" in out and "object_pairs_hook" in out

    def swallow(text):
        try:
            return nb10.SOLUTIONS["check_parse_arguments"]()(text)
        except ValueError:
            return {}

    assert "你返回了 {}；请用 ValueError 拒绝它。" in chinese(run(nb10.check_parse_arguments, swallow, capsys))


def test_chinese_loop_messages_for_real_wrong_answers(zh, capsys):
    only_first = _loop(lambda r, calls, ex: [i.to_dict() for i in r.output] + _outputs(calls[:1], ex), status=True)
    out = chinese(run(nb10.check_responses_loop, only_first, capsys))
    assert "用例“一个响应里的两次读取”：有一个 function_call 发回去时没有带上它的 function_call_output" in out
    everything = lambda r, calls, ex: [i.to_dict() for i in r.output] + _outputs(calls, ex)  # noqa: E731
    out = chinese(run(nb10.check_responses_loop, _loop(everything, budget=False, status=True), capsys))
    assert "永不停止的模型：你的循环在 8 次请求之后还在请求；在 max_steps（3）次模型请求之后用 raise RuntimeError 停下" in out
    out = chinese(run(nb10.check_responses_loop, _loop(everything), capsys))
    assert "在 max_output_tokens 处被截断的响应：你在" in out and "检查 response.status：'incomplete'" in out


def test_the_reference_solutions_pass_in_chinese(zh, capsys):
    assert nb10.check_pair_call_ids(nb10.SOLUTIONS["check_pair_call_ids"]()) is True
    assert nb10.check_next_step(nb10.SOLUTIONS["check_next_step"]()) is True
    out = capsys.readouterr().out
    assert "✓ 12 个输入列表全部正确" in out and "✓ next_step 对全部 36 个用例都选对了下一步" in out
