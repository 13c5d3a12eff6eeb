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
    assert "a retry after a timeout" in out and "2 records for one request" in out and "'TIMEOUT', 'ok'" in out


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
    assert "is not a next step" in run(nb10.check_next_step, lambda e, w, k: True, capsys)


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
    assert "NaN as a number" in out and "parse_constant" in out


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
    assert capsys.readouterr().out.startswith("✗ Not answered yet: write run_loop(")


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
