"""Each picture a notebook draws equals the records of the run it was drawn from.

The notebook's own cells run here (read from the stored English notebook by cell id, executed in an
in-process IPython shell, top-level `await` included): the cells that set up and make the run, then the
picture's cell. No step is copied into the test, so a notebook that changes what it runs changes what
is checked. Only the cells a picture needs run (07's timing measurements, for one, do not). Then each
picture's marks are read against what the run recorded, as the learner is told to check it: the
model's HTTP bodies (`course.wire`, a client's `HttpCapture`), the JSON-RPC messages
(`course.mcp.messages`), the loop's trace, the stream's events, the retry outcome, the audit log, the
executions' measured times. nbval, for its part, holds the stored picture's text to what a fresh run
draws.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from course_lib.pictures.charts import waves_of
from course_lib.pictures.diagram import APP, MODEL, Diagram, short
from course_lib.streaming import wire_events

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


class Ran:
    """Cells of one English notebook, by id, run in order in an in-process IPython shell."""

    def __init__(self, stem: str, *, one_loop: bool = False) -> None:
        from IPython.core.interactiveshell import InteractiveShell

        notebook = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))
        self.cells = {c["id"]: "".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"}
        InteractiveShell.clear_instance()
        self.shell = InteractiveShell.instance()
        self.loop = asyncio.new_event_loop() if one_loop else None  # a kernel's one loop, for clients made in one cell
        self.shell.loop_runner = self.loop.run_until_complete if self.loop else asyncio.run  # else one loop a cell
        self.ns = self.shell.user_ns
        self.shown: dict[str, Any] = {}  # each cell's value (a picture cell's: its Picture), by cell id

    def run(self, *ids: str) -> None:
        for cell_id in ids:
            result = self.shell.run_cell(self.cells[cell_id], store_history=False)
            result.raise_error()
            self.shown[cell_id] = result.result


def ran(stem: str, ids: list[str], closing: str, monkeypatch: pytest.MonkeyPatch, *, one_loop: bool = False) -> Iterator[Ran]:
    """Run the cells `ids`, yield, then run `closing` (what the notebook's last cell does to close the course)."""
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.chdir(NOTEBOOKS)  # the kernel's folder: the English edition
    # IPython puts its user module in sys.modules["__main__"] (no __spec__): put pytest's back afterwards, or a
    # later test that starts a process with multiprocessing's "spawn" fails on it.
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])
    monkeypatch.delenv("COURSE_LANG", raising=False)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "COURSE_MODEL"):
        monkeypatch.delenv(name, raising=False)  # the offline model, as in the stored notebooks
    notebook = Ran(stem, one_loop=one_loop)
    try:
        notebook.run(*ids)
        yield notebook
    finally:
        notebook.shell.run_cell(closing, store_history=False).raise_error()
        InteractiveShell.clear_instance()
        if notebook.loop:
            import gc

            notebook.ns.clear()
            gc.collect()  # what the cells left behind lets go of its transports while their loop still runs
            notebook.loop.close()


@pytest.fixture(scope="module")
def module_monkeypatch() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


# ---- what a sequence diagram must hold, read from the records themselves ---------------------------


def answer_calls(envelope: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """(kind and name, call id) of each call an answer body holds, in its order, as its wire JSON has them."""
    if envelope == "responses":
        return [(f"function_call {i['name']}", i["call_id"]) for i in body["output"] if i["type"] == "function_call"]
    if envelope == "chat":
        return [(f"tool_calls {c['function']['name']}", c["id"]) for c in body["choices"][0]["message"].get("tool_calls") or []]
    return [(f"tool_use {b['name']}", b["id"]) for b in body["content"] if b["type"] == "tool_use"]


def fed_back(envelope: str, request: dict[str, Any], before: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(kind, call id) of each result a request carries that the request before it did not."""
    items = request["input"] if envelope == "responses" else request["messages"]
    old = (before or {}).get("input" if envelope == "responses" else "messages") or []
    new = items[len(old):] if items[: len(old)] == old else items
    if envelope == "responses":
        return [("function_call_output", i["call_id"]) for i in new if i.get("type") == "function_call_output"]
    if envelope == "chat":
        return [("role: tool", m["tool_call_id"]) for m in new if m.get("role") == "tool"]
    return [("tool_result", b["tool_use_id"]) for m in new if isinstance(m.get("content"), list)
            for b in m["content"] if b.get("type") == "tool_result"]  # fmt: skip


def assert_model_side(diagram: Diagram, envelope: str, exchanges: list[Any]) -> None:
    """A request arrow and an answer arrow per HTTP exchange, in order; each answer names the calls its
    body holds, each request the results it added, each by its own id."""
    arrows = diagram.between(APP, MODEL)
    assert [(a.source, a.target) for a in arrows] == [(APP, MODEL), (MODEL, APP)] * len(exchanges)
    before = None
    for n, exchange in enumerate(exchanges, start=1):
        request, answer = arrows[2 * n - 2], arrows[2 * n - 1]
        assert request.lines[0].startswith(f"request {n}") and answer.lines[0].startswith(f"answer {n}")
        calls = answer_calls(envelope, exchange.response)
        assert [line for line in answer.lines if line.startswith(("function_call ", "tool_calls ", "tool_use "))] == [
            f"{kind} · {short(call_id)}" for kind, call_id in calls]
        results = fed_back(envelope, exchange.request, before)
        assert [line.split(" · ")[:2] for line in request.lines[1:] if line.startswith(("function_call_output", "role: tool", "tool_result"))] == [
            [kind, short(call_id)] for kind, call_id in results]  # fmt: skip
        before = exchange.request


def server_arrows(diagram: Diagram) -> list[Any]:
    """The arrows between the app and a server (not the model's, not a person's, not a note)."""
    return [a for a in diagram.arrows if not a.note and any(lane.startswith("server:") for lane in (a.source, a.target))]


def drawn_order(messages: list[Any]) -> list[Any]:
    """The order the diagram promises: as the messages crossed, except that answers which came back to
    back (calls run together) follow the order of their requests."""
    asked = {m.json["id"]: n for n, m in enumerate(messages) if m.direction == "app→server" and "method" in m.json
             and "id" in m.json}  # fmt: skip
    drawn, together = [], []
    for message in [*messages, None]:
        if message is not None and message.direction != "app→server" and message.json.get("id") in asked:
            together.append(message)
            continue
        drawn += sorted(together, key=lambda answer: asked[answer.json["id"]])
        together = []
        if message is not None:
            drawn.append(message)
    return drawn


def assert_server_side(diagram: Diagram, messages: list[Any]) -> None:
    """One arrow per JSON-RPC message, in the order they crossed (`drawn_order`), its direction and its id."""
    arrows = server_arrows(diagram)
    messages = drawn_order(messages)
    assert len(arrows) == len(messages)
    for arrow, message in zip(arrows, messages):
        assert (arrow.source == APP) == (message.direction == "app→server")
        if "id" in message.json:
            assert re.search(rf"\bid {message.json['id']}\b", arrow.lines[0]), (arrow, message.json)
        else:
            assert arrow.style == "notify" and arrow.text == message.json["method"]
        if "method" in message.json and "id" in message.json:
            assert arrow.lines[0].startswith(message.json["method"])
        result = message.json.get("result") or {}
        if result.get("isError"):
            assert arrow.style == "error" and "isError true" in arrow.lines[0]


def assert_links(diagram: Diagram, trace: list[Any]) -> None:
    """The app's link for each call that crossed (its call_id and JSON-RPC id, from the loop's trace),
    right after the tools/call that carried it, and after the answer that asked for it."""
    texts = [a.text for a in diagram.arrows]
    carried = [t for t in trace if t.mcp_id is not None]
    assert [a.text for a in diagram.arrows if a.note and a.style == "link"] == [
        f"{short(t.call_id)} ⇄ id {t.mcp_id}" for t in carried]
    for t in carried:
        note = texts.index(f"{short(t.call_id)} ⇄ id {t.mcp_id}")
        assert texts[note - 1].startswith("tools/call ") and texts[note - 1].endswith(f"· id {t.mcp_id}")
        asked = next(i for i, a in enumerate(diagram.arrows) if a.source == MODEL and short(t.call_id) in a.text)
        assert asked < note - 1


def run_messages(course: Any, trace: list[Any]) -> list[Any]:
    """The JSON-RPC messages of one run: its tools/call requests and their answers, as recorded (`course`
    is a Course, or a connection itself)."""
    ids = {t.mcp_id for t in trace if t.mcp_id is not None}
    return [m for m in getattr(course, "mcp", course).messages if m.json.get("id") in ids]


def run_exchanges(wire: Any, answers: list[Any]) -> list[Any]:
    """The HTTP exchanges of one run: those whose answer is one of the run's typed answers."""
    ids = {a.id for a in answers}
    return [e for e in wire.exchanges if isinstance(e.response, dict) and e.response.get("id") in ids]


def assert_run(diagram: Diagram, course: Any, result: Any, envelope: str = "responses", wire: Any = None) -> None:
    answers = getattr(result, "responses", None) or getattr(result, "completions", None) or result.messages_out
    exchanges = run_exchanges(wire or course.wire, answers)
    assert len(exchanges) == result.steps
    assert_model_side(diagram, envelope, exchanges)
    assert_server_side(diagram, run_messages(course, result.trace))
    assert_links(diagram, result.trace)


# ---- 00 ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nb00(module_monkeypatch):
    yield from ran("00_map_and_first_run", ["90523a52", "524718b4", "68f793bd", "pic00-run"], "course.close()", module_monkeypatch)


def test_00_the_first_run_is_drawn_from_every_exchange_and_message_the_course_recorded(nb00):
    course, result = nb00.ns["course"], nb00.ns["result"]
    diagram = nb00.shown["pic00-run"].marks
    assert_model_side(diagram, "responses", course.wire.exchanges)  # the two model requests of section 3
    assert_server_side(diagram, course.mcp.messages)  # initialize, the notification, tools/list, tools/call
    assert_links(diagram, result.trace)
    assert [m.json.get("id") for m in course.mcp.messages if m.direction == "app→server"] == [1, None, 2, 3]


# ---- 03 ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nb03(module_monkeypatch):
    yield from ran("03_calling_mcp_server", ["e272002e", "605f13d4", "pic03-session", "33cc86c4", "pic03-domains"],
                   "course.close()", module_monkeypatch)  # fmt: skip


def test_03_the_session_picture_is_every_json_rpc_message_of_the_connection(nb03):
    course, executed = nb03.ns["course"], nb03.ns["executed"]
    diagram = nb03.shown["pic03-session"].marks
    assert [lane for lane, _ in diagram.lanes] == [APP, "server:fs"]
    messages = course.mcp.messages[: course.mcp.messages.index(next(
        m for m in course.mcp.messages if m.json == executed.exchange.response)) + 1]  # up to the call of section 4
    assert_server_side(diagram, messages)
    assert server_arrows(diagram)[-2].text == f"tools/call read_text_file · id {executed.exchange.id}"


def test_03_the_two_domains_picture_is_the_runs_exchanges_and_its_link(nb03):
    course, run = nb03.ns["course"], nb03.ns["run"]
    diagram = nb03.shown["pic03-domains"].marks
    assert_run(diagram, course, run)
    link, call_id = nb03.ns["link"], nb03.ns["function_call"].call_id
    assert f"{short(call_id)} ⇄ id {link.mcp_id}" in [a.text for a in diagram.arrows]


# ---- 04 ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nb04(module_monkeypatch):
    yield from ran("04_feedback_loop", ["320bea6e", "11d55f51", "c1b54fab", "bb1ef78a", "pic04-run", "9e3c6984", "pic04-missing"], "course.close()",
                   module_monkeypatch)  # fmt: skip


def test_04_two_model_requests_around_one_tool_call(nb04):
    course, result = nb04.ns["course"], nb04.ns["result"]
    diagram = nb04.shown["pic04-run"].marks
    assert_run(diagram, course, result)
    assert len(diagram.between(APP, MODEL)) == 4 and len(server_arrows(diagram)) == 2


def test_04_the_failed_read_is_drawn_as_a_failure_on_both_sides(nb04):
    course, missing = nb04.ns["course"], nb04.ns["missing"]
    diagram = nb04.shown["pic04-missing"].marks
    assert_run(diagram, course, missing)
    code = json.loads(missing.trace[0].output)["error"]["code"]
    assert f"function_call_output · {short(missing.trace[0].call_id)} · ✗ {code}" in diagram.between(APP, MODEL)[2].lines
    assert server_arrows(diagram)[-1].style == "error"


# ---- 04b -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nb04b(module_monkeypatch):
    yield from ran("04b_streaming_the_call_arrives_in_pieces", ["f3d6e80f", "49131f04", "pic04b-stream"], "course.close()",
                   module_monkeypatch)  # fmt: skip


def test_04b_every_event_of_the_stream_is_a_mark_on_its_output_index_row(nb04b):
    course, events = nb04b.ns["course"], nb04b.ns["events_2"]
    picture = nb04b.shown["pic04b-stream"]
    on_the_wire = wire_events(course.wire.last.response)  # the same stream, as the HTTP capture kept it
    expected = [(e["sequence_number"], e["type"], e.get("output_index")) for e in on_the_wire]
    assert [(m.number, m.type, m.output_index) for m in picture.marks] == expected
    assert expected == [(e.sequence_number, e.type, getattr(e, "output_index", None)) for e in events]
    for e in events:  # each row is named by the call its output_item.added event announced
        if e.type == "response.output_item.added" and e.item.type == "function_call":
            assert f"  [{e.output_index}] function_call {e.item.name} {e.item.call_id}:" in picture.text


# ---- 04c -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nb04c(module_monkeypatch):
    yield from ran("04c_the_same_call_in_other_envelopes", ["c02", "c04", "pic04c-envelopes"], "course.close()\nchat_client.close()\nclaude.close()",
                   module_monkeypatch)  # fmt: skip


def test_04c_each_envelope_is_drawn_from_its_own_clients_capture(nb04c):
    ns = nb04c.ns
    responses, chat, messages = nb04c.shown["pic04c-envelopes"].marks
    assert_run(responses, ns["course"], ns["responses_run"])
    assert_run(chat, ns["course"], ns["chat_run"], "chat", ns["chat_wire"])
    assert_run(messages, ns["course"], ns["messages_run"], "messages", ns["messages_wire"])
    assert [d.title for d in (responses, chat, messages)] == ["Responses", "Chat Completions", "Messages"]


# ---- 05 ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nb05(module_monkeypatch):
    yield from ran("05_errors_and_retries", ["9aaf3539", "f53e36f4", "9a2fee15", "ff0310a6", "pic05-retries"], "course.close()",
                   module_monkeypatch)  # fmt: skip


def test_05_the_waits_drawn_are_the_waits_the_policy_drew(nb05):
    outcome, policy, waits = nb05.ns["outcome"], nb05.ns["policy"], nb05.ns["waits"]
    tries = nb05.shown["pic05-retries"].marks
    assert [(t.number, t.waited, t.outcome) for t in tries] == [(a.number, a.waited, a.outcome) for a in outcome.attempts]
    assert [t.waited for t in tries[1:]] == waits  # what fake_sleep recorded
    assert [t.ceiling for t in tries] == [None, *(policy.ceiling(n) for n in range(1, len(tries)))]
    assert all(0 <= t.waited <= t.ceiling for t in tries[1:])
    assert [t.at for t in tries] == [round(sum(waits[:i]), 3) for i in range(len(tries))]


# ---- 06 ------------------------------------------------------------------------------------------

NB06 = ["da3d431f", "7bcac6cd", "d4b4d182", "3f6b15c4", "bcd4499f", "40096faa", "83e20dae", "a5c3e0d1", "d456c87a",
        "d44de412", "b7d2f4a9", "4e25b471", "ecb83d04", "pic06-approval"]  # fmt: skip


@pytest.fixture(scope="module")
def nb06(module_monkeypatch):
    yield from ran("06_approval_and_side_effects", NB06, "course.close()\nremove_scratch_workspace(root)", module_monkeypatch)


def test_06_each_action_is_drawn_at_the_times_the_audit_log_recorded(nb06):
    records = nb06.ns["store"].audit.records
    pauses = nb06.shown["pic06-approval"].marks
    zero = records[0].when
    assert [p.action_id for p in pauses] == list(dict.fromkeys(r.action_id for r in records))
    for pause in pauses:
        mine = [r for r in records if r.action_id == pause.action_id]
        assert pause.attempts == tuple((r.when - zero, r.result) for r in mine)
        asked = [r.when - zero for r in mine if r.result == "APPROVAL_REQUIRED"]
        ended = [r for r in mine if r.result != "APPROVAL_REQUIRED"]
        assert pause.asked == (asked[0] if asked else None)
        assert (pause.ended, pause.outcome) == ((ended[0].when - zero, ended[0].result) if ended else (None, None))
    # the action the panel approved waited across the 301 s the clock was moved on
    panel = nb06.ns["panel"].action.action_id
    waited = next(p for p in pauses if p.action_id == panel)
    assert waited.outcome == "ok" and waited.ended - waited.asked > 301


# ---- 07 ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nb07(module_monkeypatch):
    yield from ran("07_parallel_calls", ["bafcefa1", "68ff6b83", "1919ebe4", "a6057b33", "pic07-timeline", "62b36cf1",
                                         "pic07-loop"], "course.close()", module_monkeypatch)  # fmt: skip


def test_07_each_bar_is_an_executions_measured_time_rounded_to_the_latency(nb07):
    latency, bars = nb07.ns["LATENCY"], nb07.shown["pic07-timeline"].marks
    for group, executions in (("together", nb07.ns["at_once"]), ("one at a time", nb07.ns["one_by_one"])):
        mine = [b for b in bars if b.group == group]
        zero = min(e.started for e in executions)
        assert [(b.call_id, b.tool, b.outcome) for b in mine] == [(e.call_id, e.tool, "ok") for e in executions]
        for bar, e in zip(mine, executions):
            assert bar.start == pytest.approx(round((e.started - zero) / latency) * latency)
            assert bar.end == pytest.approx(round((e.ended - zero) / latency) * latency)
    together = [b for b in bars if b.group == "together"]
    serial = [b for b in bars if b.group == "one at a time"]
    assert [len(w) for w in waves_of(together)] == [3]  # the three waits overlapped
    assert [len(w) for w in waves_of(serial)] == [1, 1, 1]  # each started when the one before ended
    executions = nb07.ns["one_by_one"]
    assert all(a.ended <= b.started for a, b in zip(executions, executions[1:]))  # measured, not only rounded


def test_07_the_loops_three_calls_each_cross_with_their_own_json_rpc_id(nb07):
    course, loop = nb07.ns["course"], nb07.ns["loop"]
    diagram = nb07.shown["pic07-loop"].marks
    assert_run(diagram, course, loop)
    assert len([a for a in server_arrows(diagram) if a.text.startswith("tools/call")]) == len(loop.trace) == 3


# ---- 09 ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nb09(module_monkeypatch):
    cells = ["4b4470a0", "d23ec540", "pic09-turn", "1434378e", "b852e548", "pic09-resumed", "296d6ad7", "11b3436b",
             "pic09-compare"]
    yield from ran("09_capstone_notes_assistant", cells, "assistant.close()\ncourse.close()", module_monkeypatch)


def test_09_the_turn_is_drawn_up_to_the_write_held_for_a_person(nb09):
    from course_lib.pictures.diagram import PERSON

    diagram, pending = nb09.shown["pic09-turn"].marks, nb09.ns["pending"]
    assert [lane for lane, _ in diagram.lanes][-1] == PERSON
    ask, wait = diagram.arrows[-2:]
    action = pending.result["error"]["action_id"]
    assert (ask.source, ask.target, ask.text) == (APP, PERSON, f"approve? · {pending.tool} · {action}")
    assert wait.style == "wait"
    asked = [a.text for a in diagram.between(APP, MODEL)]
    assert [t.split(" · ")[0] for t in asked[::2]] == ["request 1", "request 2", "request 3"]
    # the held write never crossed to the server: every tools/call drawn is a search or a read
    assert [a.text.split(" · ")[0] for a in server_arrows(diagram) if a.text.startswith("tools/call")] == [
        "tools/call search_notes", "tools/call read_note", "tools/call read_note"]


def test_09_the_resumed_run_shows_the_approved_action_then_its_one_tools_call(nb09):
    course, result, pending, assistant = (nb09.ns[name] for name in ("course", "result", "pending", "assistant"))
    diagram = nb09.shown["pic09-resumed"].marks
    exchanges = run_exchanges(course.wire, result.responses)
    assert len(exchanges) == result.steps == 4
    assert_model_side(diagram, "responses", exchanges)
    notes = next(iter(assistant.host.connections.values()))  # the notes server, the assistant's one connection
    assert_server_side(diagram, run_messages(notes, result.trace))
    assert_links(diagram, result.trace)
    texts = [a.text for a in diagram.arrows]
    action = pending.result["error"]["action_id"]
    asked = texts.index(f"approve? · {pending.tool} · {action}")
    save = next(t for t in result.trace if t.call_id == pending.call_id)
    assert texts[asked + 1] == f"approved · {action}"
    assert texts[asked + 2] == f"tools/call save_learning_gap · id {save.mcp_id}"


def test_09_the_comparison_chart_is_the_rates_compare_returned(nb09):
    from course_lib.comparison import comparison_table
    from course_lib.evaluation import metric_label

    compared, picture = nb09.ns["compared"], nb09.shown["pic09-compare"]
    expected = [(metric_label(m.name), version, m.passed, m.total) for version, (_, metrics) in compared.items()
                for m in metrics]  # fmt: skip
    assert [(r.metric, r.version, r.passed, r.total) for r in picture.marks] == expected
    assert picture.text.endswith(comparison_table(compared))


# ---- 09b -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nb09b(module_monkeypatch):
    cells = ["fw02", "fw07", "fw13", "pic09b-two", "fw17", "pic09b-mastra"]
    yield from ran("09b_frameworks_carry_the_loop", cells, "bench.close()\nawait model_client.close()",
                   module_monkeypatch, one_loop=True)  # fmt: skip


def assert_framework_run(diagram: Diagram, run: Any) -> None:
    """The model side from the run's model tap, the server side from its server tap, and the links
    the framework kept (read off both wires: `frameworks.trace.calls`)."""
    from course_lib.frameworks.trace import calls

    assert len(diagram.between(APP, MODEL)) == 2 * len(run.model)  # a request and an answer per model exchange
    assert_server_side(diagram, run.mcp)  # one arrow per JSON-RPC message, in order, its direction and id
    links = [a.text for a in diagram.arrows if a.note and a.style == "link"]
    assert links == [f"{short(t.call_id)} ⇄ id {t.mcp_id}" for t in calls(run) if t.mcp_id is not None]


def test_09b_the_two_python_runs_are_each_drawn_from_their_own_taps(nb09b):
    from course_lib import pictures

    picture = nb09b.shown["pic09b-two"]
    for name in ("agents_run", "pai_run"):
        run = nb09b.ns[name]
        alone = pictures.sequence(run)
        assert_framework_run(alone.marks, run)
        assert alone.text in picture.text  # side by side is the two pictures, each whole


def test_09b_mastras_run_is_drawn_from_its_taps(nb09b):
    assert_framework_run(nb09b.shown["pic09b-mastra"].marks, nb09b.ns["mastra_run"])
