"""The generated-mutation suite: every check refuses the wrong answers made from its own reference
solution (`mutants.py`), one line naming the mistake, no traceback, no fault of the check.

A mutant a check accepts is either a hole in the check or behaves like the reference on everything
the exercise promises. The second kind is listed in `EQUIVALENT` with the reason; anything else that
survives fails this test, and so does a listed mutant the check now refuses (the list stays true).
The answers that are data are mutated one entry at a time (`DATA`): each must be refused.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import course_lib.exercises as exercises
from course_lib.exercises import guard
from mutants import data_mutants, mutants

MODULES = [importlib.import_module(f"course_lib.exercises.{m.name}")
           for m in pkgutil.iter_modules(exercises.__path__) if m.name.startswith("nb")]  # fmt: skip
CODE = [(module, name) for module in MODULES for name, make in module.SOLUTIONS.items() if callable(make())]
DATA = [(module, name) for module in MODULES for name, make in module.SOLUTIONS.items() if not callable(make())]

ORDER = "the order of independent items, which nothing in the exercise or the API gives a meaning to"
SAME_ID = "another id format, as safe as the reference's (the exact characters of an id are the learner's choice)"
EQUIVALENT: dict[tuple[str, str], str] = {
    ("nb00.check_final_text", "drop body[0] line 4:4"): "no item but a message carries output_text parts",
    ("nb00.check_final_text", "drop body[0] line 5:8"): "the same `continue`: no item but a message carries output_text",
    ("nb02.check_parse_head", "reverse line 3:0"): "the duplicate-key test counts keys, in any order",
    ("nb03.check_pair_by_id", "reverse line 2:0"): "JSON-RPC ids are unique within a session: " + ORDER,
    ("nb03.check_pair_by_id", "reverse line 3:0"): "JSON-RPC ids are unique within a session: " + ORDER,
    ("nb03.check_pair_by_id", "reverse line 4:0"): "a dict is compared without its order: " + ORDER,
    ("nb03b.check_route", "reverse line 2:4"): "a host's aliases are unique (prefix__tool), so one server matches",
    ("nb03c.check_session_to_send", "compare Lt line 6:13"): "no server sends a session id on a 400 (only 4xx "
                                                              "from 400 up differ), so `< 400` and `<= 400` agree",
    ("nb03c.check_session_to_send", "constant 400+1 line 6:31"): "the same boundary as `<= 400`",
    ("nb03c.check_accept_token", "constant 0+1 line 4:55"): "a token with no exp is refused either way (1 is long past)",
    ("nb04.check_second_input", "reverse line 5:0"): "the outputs, after every call, are paired by call_id: " + ORDER,
    ("nb04.check_request_2", "reverse line 3:0"): "outputs are paired by call_id: " + ORDER,
    ("nb04c.check_chat_replies", "keyword exclude_none= line 4:12"): "the API takes an assistant message's null fields "
                                                                     "(the SDK's own message object sends them)",
    ("nb04c.check_chat_replies", "constant True line 4:44"): "the same: exclude_none=False",
    ("nb04c.check_chat_replies", "reverse line 5:0"): "tool messages are paired by tool_call_id: " + ORDER,
    ("nb06.check_make_action_id", "keyword separators= line 3:11"): SAME_ID,
    ("nb06.check_make_action_id", "keyword ensure_ascii= line 3:11"): SAME_ID,
    ("nb06.check_make_action_id", "constant False line 3:102"): SAME_ID + " (ensure_ascii=True)",
    ("nb06.check_make_action_id", "constant 16+1 line 4:70"): "17 hex digits: 68 bits, above the 64 required",
    ("nb07.check_pair_outputs", "reverse line 8:4"): "two outputs for one call with different texts: the exercise "
                                                     "does not say which wins",
    ("nb07.check_pair_outputs", "reverse line 12:0"): "the order of the call_ids named in the error message",
    ("nb09.check_citation_correct", "reverse line 3:4"): "citations are collected in a set: " + ORDER,
    ("nb09.check_citation_correct", "reverse line 4:8"): "citations are collected in a set: " + ORDER,
    ("nb09.check_citation_correct", "reverse line 6:0"): "citations are collected in a set: " + ORDER,
    ("nb09.check_tool_selection_accuracy", "reverse line 2:0"): "a sum over traces: " + ORDER,
    ("nb10.check_pair_call_ids", "reverse line 3:4"): "every call is seen: only which of two reused ids is named changes",
    ("nb10.check_pair_call_ids", "reverse line 8:4"): "every output is seen: only which error is named first changes",
    ("nb10.check_pair_call_ids", "reverse line 14:0"): "the order of the call_ids named in the error message",
    ("nb10.check_pair_call_ids", "reverse line 16:0"): "a dict is compared without its order: " + ORDER,
    ("nb10.check_pair_call_ids", "swap_id ['call_id'] line 5:40"): "inside the error's message: a ValueError either way",
    ("nb10.check_action_id", "keyword separators= line 2:16"): SAME_ID,
    ("nb10.check_action_id", "keyword ensure_ascii= line 2:16"): SAME_ID,
    ("nb10.check_action_id", "constant False line 2:90"): SAME_ID + " (ensure_ascii=True)",
    ("nb10.check_action_id", "constant 16+1 line 4:97"): "17 hex digits: 68 bits, above the 64 required",
    ("nb10.check_run_turn", "reverse line 10:12"): "the reads of one wave start together: " + ORDER,
    ("nb10.check_parse_arguments", "drop body[0] line 2:0"): "a value that is not text is refused by json.loads "
                                                             "anyway (only bytes would parse, and none is ever sent)",
    ("nb10.check_parse_arguments", "drop body[0] line 3:4"): "the same test's raise",
    ("nb10.check_parse_arguments", "reverse line 6:0"): "the duplicate-key test counts keys, in any order",
    ("nb10.check_responses_loop", "reverse line 4:4"): "the steps are counted, not numbered",
    ("nb10.check_responses_loop", "constant 5+1 line 2:36"): "a default the check never uses (it passes max_steps)",
    ("nb09b.check_links", "drop body[0] line 7:8"): "an item that is not a function_call has no arguments (null), "
                                                      "which no tools/call carries: it is never paired either way",
    ("nb09b.check_links", "drop body[0] line 8:12"): "the same `continue`",
    ("nb09b.check_links", "reverse line 6:8"): "calls of one response with the same arguments may be sent in any "
                                               "order (a framework runs them at once): " + ORDER,
    ("nb09b.check_keep_failure", "keyword type= line 9:15"): "TextContent's type is \"text\" by default",
    ("nb09c.check_find_links", "reverse line 4:4"): "each call has one tools/call at its nearest level: " + ORDER,
    ("nb09c.check_find_links", "reverse line 7:4"): "a dict is compared without its order: " + ORDER,
    ("nb09c.check_find_links", "reverse line 13:0"): "each call has one tools/call at its nearest level: " + ORDER,
    ("nb09c.check_find_links", "reverse line 17:0"): "each call has one tools/call at its nearest level: " + ORDER,
    ("nb09c.check_tool_span", "keyword kind= line 6:9"): "OpenTelemetry starts a span as INTERNAL by default",
}  # fmt: skip
"""(notebook.check, mutant key) → why that mutant behaves like the reference on every case that
matters. Keys are `operator detail:column`, as `mutants.mutants` makes them."""

DATA_CHOICES = {
    "check_kinds": {"*": ["rule", "value", "result"]},
    "check_predictions": {"*": ["OK", "INVALID_INPUT", "FORBIDDEN", "NOT_FOUND"]},
    "check_reference_predictions": {key: [0, 1, 2, 5, "error"] for key in "ABCD"},
    "check_write_decisions": {key: [True, False] for key in "abcdef"},
    "check_outcomes": {key: ["written", "replayed", "conflict"] for key in "abcdef"},
    "check_tool_choices": {"use_backup": ["auto", "required", {"type": "function", "name": "fs__read_text_file"}],
                           "no_tools": ["auto", "required"]},
}  # fmt: skip


def _label(module, name):
    return f"{module.__name__.rsplit('.', 1)[1]}.{name}"


def _refuses(check, answer, capsys):
    """(refused with one ✗ line and no traceback, what it printed)."""
    capsys.readouterr()
    returned = check(answer)
    printed = capsys.readouterr().out
    assert "Traceback" not in printed and "The check itself failed" not in printed, printed
    if returned is False:
        assert printed.startswith("✗ ") and printed.count("\n") == 1, printed
    return returned is False, printed


@pytest.fixture(autouse=True)
def _quick(monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS", "off")
    monkeypatch.setenv("COURSE_LANG", "en")
    monkeypatch.setattr(guard, "LIMIT_SECONDS", 10.0)  # a mutant that loops is stopped, and said so


@pytest.mark.parametrize(("module", "name"), CODE, ids=[_label(m, n) for m, n in CODE])
def test_every_mutant_of_the_reference_is_refused(module, name, capsys):
    label = _label(module, name)
    check, made = getattr(module, name), mutants(module.SOLUTIONS[name]())
    assert made, label
    survivors = []
    for mutant in made:
        refused, printed = _refuses(check, mutant.answer, capsys)
        if not refused:
            survivors.append(mutant.key)
    listed = {key for (where, key) in EQUIVALENT if where == label}
    assert [key for key in survivors if key not in listed] == [], f"{label}: accepted mutants nobody explained"
    assert sorted(listed - set(survivors)) == [], f"{label}: listed as equivalent, yet refused now: drop them"


@pytest.mark.parametrize(("module", "name"), DATA, ids=[_label(m, n) for m, n in DATA])
def test_every_answer_with_one_entry_changed_is_refused(module, name, capsys):
    check, reference = getattr(module, name), module.SOLUTIONS[name]()
    choices = DATA_CHOICES.get(name)
    if name.startswith(("check_tail", "check_other", "check_not_sent")):
        from course_lib.explorer import PANELS

        choices = {"*": list(PANELS)}
    made = data_mutants(reference, choices)
    if name == "check_strict_search_notes":
        made = _schema_mutants(reference)
    if name == "check_diagnoses":
        made = _diagnosis_mutants(reference)
    if name == "check_retry_policy":
        made = _policy_mutants(reference)
    assert made, name
    accepted = [mutant.key for mutant in made if not _refuses(check, mutant.answer, capsys)[0]]
    assert accepted == [], f"{_label(module, name)} accepted: {accepted}"


def _schema_mutants(schema):
    """The strict schema of 01 with one thing changed that strict mode or the MCP rule refuses."""
    import copy

    from mutants import Mutant

    def changed(key, edit):
        fresh = copy.deepcopy(schema)
        edit(fresh)
        return Mutant(key, key, fresh)

    limit = lambda s: s["properties"]["limit"]  # noqa: E731
    return [
        changed("limit not required", lambda s: s["required"].remove("limit")),
        changed("additionalProperties dropped", lambda s: s.pop("additionalProperties")),
        changed("null dropped from limit", lambda s: limit(s).update(limit(s)["anyOf"][0]) or limit(s).pop("anyOf")),
        changed("maximum 21", lambda s: limit(s)["anyOf"][0].update(maximum=21)),
        changed("minimum 0", lambda s: limit(s)["anyOf"][0].update(minimum=0)),
        changed("oneOf for anyOf", lambda s: limit(s).update(oneOf=limit(s).pop("anyOf"))),
        changed("a default the server does not use", lambda s: limit(s).update(default=10)),
        changed("query may be null", lambda s: s["properties"]["query"].update(type=["string", "null"])),
        changed("query must not be empty", lambda s: s["properties"]["query"].update(minLength=1)),
        changed("limit renamed", lambda s: s["properties"].update(max_results=s["properties"].pop("limit"))
                or s.update(required=["query", "max_results"])),
    ]


def _policy_mutants(policy):
    """05's policy with one number moved past a limit of the exercise (3 attempts, first wait ≥ 0.1 s,
    all waits ≤ 0.5 s, jitter ≥ 0.1): many policies are right, so only moves that cross a limit."""
    import dataclasses

    from mutants import Mutant

    moves = {"max_attempts": [2, 4], "base_delay": [0.05, 0.4], "jitter": [0.05, 0.0], "factor": [4.0], "budget": [0.2]}
    return [Mutant(f"{field}={value}", f"{field}={value}", dataclasses.replace(policy, **{field: value}))
            for field, values in moves.items() for value in values]


def _diagnosis_mutants(answers):
    from course_lib.failure_table import ROWS
    from mutants import Mutant

    made = []
    for trace, (row, first) in answers.items():
        made.append(Mutant(f"{trace} row", trace, {**answers, trace: (next(r for r in ROWS if r != row), first)}))
        others = [check for check in ROWS[row].checks if check != first]
        made.append(Mutant(f"{trace} check", trace, {**answers, trace: (row, others[0])}))
    return made
