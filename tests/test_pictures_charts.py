"""Charts (`course_lib.pictures`): each mark is one record of the module that kept it, and the PNG is
really drawn (the same bytes for the same marks; Chinese glyphs, not boxes, in the zh-CN edition)."""

from __future__ import annotations

import io
import json
from functools import partial

import anyio
import pytest
from pydantic import BaseModel, ConfigDict

from course_lib import pictures
from course_lib.execution import Executor, Session, Tool, ToolError
from course_lib.parallel import Call, execute_batch
from course_lib.retry import RetryPolicy, execute_with_retries

ALICE = Session("alice")
LATENCY = 0.05


class KeyArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    key: str


async def lookup(args, ctx):
    await anyio.sleep(LATENCY)
    return {"key": args.key}


def batch(n: int) -> list[Call]:
    return [Call(f"call_{i}", "lookup", json.dumps({"key": f"k{i}"})) for i in range(n)]


def is_png(data: bytes) -> bool:
    return data[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.anyio
async def test_a_timeline_has_a_bar_per_execution_on_its_measured_times():
    lookups = Executor([Tool("lookup", "Look up one value", KeyArgs, lookup)])
    together = await execute_batch(lookups, batch(3), ALICE)
    serial = await execute_batch(lookups, batch(3), ALICE, parallel=False)
    picture = pictures.timeline({"together": together, "one at a time": serial})

    bars = picture.marks
    assert [(b.group, b.call_id, b.outcome) for b in bars] == [
        *(("together", e.call_id, "ok") for e in together), *(("one at a time", e.call_id, "ok") for e in serial)]
    for group, executions in (("together", together), ("one at a time", serial)):
        zero = min(e.started for e in executions)
        for bar, e in zip([b for b in bars if b.group == group], executions):
            assert (bar.start, bar.end) == (e.started - zero, e.ended - zero)  # exactly what was measured
            assert bar.end - bar.start >= LATENCY * 0.9
    assert "together: [call_0 call_1 call_2]" in picture.text
    assert "one at a time: [call_0] → [call_1] → [call_2]" in picture.text
    assert not any(ch.isdigit() and "." in word for word in picture.text.split() for ch in word)  # no measured number
    assert is_png(picture.png)


@pytest.mark.anyio
async def test_a_timeline_rounded_to_the_latency_is_the_same_from_run_to_run():
    lookups = Executor([Tool("lookup", "Look up one value", KeyArgs, lookup)])
    drawn = []
    for _ in range(2):
        serial = await execute_batch(lookups, batch(3), ALICE, parallel=False)
        picture = pictures.timeline({"one at a time": serial}, unit=LATENCY)
        drawn.append(picture)
    assert [t for b in drawn[0].marks for t in (b.start, b.end)] == pytest.approx([n * LATENCY for n in (0, 1, 1, 2, 2, 3)])
    assert drawn[0].marks == drawn[1].marks
    assert drawn[0].png == drawn[1].png  # the stored picture does not change with the machine's speed


@pytest.mark.anyio
async def test_a_call_refused_before_it_ran_has_no_bar():
    lookups = Executor([Tool("lookup", "Look up one value", KeyArgs, lookup)])
    reused = [Call("call_A", "lookup", '{"key": "a"}'), Call("call_A", "lookup", '{"key": "b"}')]
    executions = await execute_batch(lookups, reused, ALICE)
    picture = pictures.timeline(executions)
    assert [(b.call_id, b.start is None, b.outcome) for b in picture.marks] == [("call_A", False, "ok"),
                                                                              ("call_A", True, "INVALID_INPUT")]
    assert "call_A: not executed (INVALID_INPUT)" in picture.text
    with pytest.raises(ValueError, match="no execution"):
        pictures.timeline([])


@pytest.mark.anyio
async def test_the_retry_chart_draws_the_waits_the_policy_drew_under_its_ceilings():
    failures = []

    async def flaky(args, ctx):
        failures.append(1)
        if len(failures) <= 2:
            raise ToolError("TIMEOUT", "the index is restarting", retryable=True)
        return {"key": args.key}

    async def no_wait(seconds):
        pass

    executor = Executor([Tool("lookup", "Look up", KeyArgs, flaky)])
    policy = RetryPolicy(max_attempts=4, base_delay=0.2, factor=2, seed=0)
    outcome = await execute_with_retries(executor, "call_r", "lookup", '{"key": "a"}', ALICE, policy=policy, sleep=no_wait)
    picture = pictures.retries(outcome, policy)

    marks = picture.marks
    assert [(t.number, t.waited, t.outcome) for t in marks] == [(a.number, a.waited, a.outcome) for a in outcome.attempts]
    assert [t.ceiling for t in marks] == [None, policy.ceiling(1), policy.ceiling(2)]
    assert all(t.waited <= t.ceiling for t in marks[1:])
    assert [t.at for t in marks] == [0.0, marks[1].waited, round(marks[1].waited + marks[2].waited, 3)]
    assert picture.text.splitlines()[-1] == f"  stopped: {outcome.stopped_because}"
    assert is_png(picture.png)


def test_the_stream_chart_has_a_mark_per_event_in_a_row_per_output_index():
    from course_lib.course import start_course
    from course_lib.streaming import StreamedRequests, wire_events

    course = start_course(quiet=True)
    try:
        streamed = StreamedRequests(course.client)
        course.run("Show the first 5 lines of /workspace/notes.txt", create=streamed)
        turn = streamed.turns[0]
        picture = pictures.stream(turn)
        captured = pictures.stream(course.wire.exchanges[0].response)
    finally:
        course.close()
    assert [(e.number, e.type, e.output_index) for e in picture.marks] == [
        (e.sequence_number, e.type, getattr(e, "output_index", None)) for e in turn.events]
    assert picture.marks == captured.marks and picture.text == captured.text  # the same events, kept on the wire
    deltas = [e for e in turn.events if e.type == "response.function_call_arguments.delta"]
    assert [m.size for m in picture.marks if "delta" in m.type] == [len(e.delta) for e in deltas]
    call = turn.items[0]
    assert f"[0] function_call {call.name} {call.call_id}: output_item.added" in picture.text
    assert f"function_call_arguments.delta ×{len(deltas)}" in picture.text
    assert len(wire_events(course.wire.exchanges[0].response)) == len(picture.marks)
    assert is_png(picture.png)


def test_the_comparison_chart_has_a_bar_per_metric_and_version():
    from course_lib.comparison import Guesses, WithoutTool, compare, comparison_table
    from course_lib.evaluation import load_questions, metric_label

    results = compare({"baseline": None, "no search step": partial(WithoutTool, tool="search_notes"),
                       "guesses": Guesses}, load_questions()[:3])  # fmt: skip
    picture = pictures.comparison(results)
    expected = [(metric_label(m.name), version, m.passed, m.total) for version, (_, metrics) in results.items() for m in metrics]
    assert [(r.metric, r.version, r.passed, r.total) for r in picture.marks] == expected
    assert picture.text.endswith(comparison_table(results))
    assert is_png(picture.png)


def _audit_with_three_writes():
    from course_lib.notes_store import AuditedExecutor, ManualClock, NotesStore, notes_tools, scratch_workspace

    root = scratch_workspace()
    clock = ManualClock()
    store = NotesStore(root, clock=clock)
    executor = AuditedExecutor(notes_tools(store), audit=store.audit)

    async def scenario():
        todo, _ = store.read("/workspace/todo.md")
        preview = await executor.execute("c1", "preview_note_update", json.dumps({"path": "todo.md", "content": todo + "x\n"}), ALICE)
        arguments = preview.result["data"]["arguments"]
        asked = await executor.execute("c2", "apply_note_update", json.dumps(arguments), ALICE)
        clock.advance(5)
        executor.approvals.approve(asked.result["error"]["action_id"])
        await executor.execute("c3", "apply_note_update", json.dumps(arguments), ALICE)
        wipe = await executor.execute("c4", "apply_note_update", json.dumps({**arguments, "content": "#\n", "expected_version": 2}), ALICE)
        executor.approvals.reject(wipe.result["error"]["action_id"])
        await executor.execute("c5", "apply_note_update", json.dumps({**arguments, "content": "##\n", "expected_version": 2}), ALICE)

    anyio.run(scenario)
    return root, store


def test_the_approval_chart_reads_each_pause_from_the_audit_log():
    from course_lib.notes_store import remove_scratch_workspace

    root, store = _audit_with_three_writes()
    try:
        records = store.audit.records
        picture = pictures.approval(store.audit)
    finally:
        store.close()
        remove_scratch_workspace(root)
    zero = records[0].when
    by_action = {}
    for r in records:
        by_action.setdefault(r.action_id, []).append(r)
    assert [p.action_id for p in picture.marks] == list(by_action)
    for pause, (action, mine) in zip(picture.marks, by_action.items()):
        assert pause.attempts == tuple((r.when - zero, r.result) for r in mine)
    approved, rejected, waiting = picture.marks
    first = by_action[approved.action_id]
    assert approved.outcome == "ok" and approved.asked == first[0].when - zero and approved.ended == first[-1].when - zero
    assert approved.ended - approved.asked >= 5  # the 5 s the person took, on the log's clock
    assert rejected.outcome == "FORBIDDEN"
    assert (waiting.outcome, waiting.ended) == (None, None)
    assert "still waiting" in picture.text.splitlines()[-1]
    assert is_png(picture.png)


def test_side_by_side_pastes_the_diagrams_left_to_right():
    from PIL import Image

    from course_lib.chat_loop import run_chat_loop
    from course_lib.course import start_course

    course = start_course(quiet=True)
    try:
        task = "Show the first 5 lines of /workspace/notes.txt"
        a = pictures.sequence(course.run(task), course, title="Responses")
        b = pictures.sequence(run_chat_loop(course.client, course.host, task), course, title="Chat Completions")
        both = pictures.side_by_side(a, b)
    finally:
        course.close()
    widths = [Image.open(io.BytesIO(p.png)).width for p in (a, b)]
    image = Image.open(io.BytesIO(both.png))
    assert image.width == sum(widths) + 24
    assert both.marks == [a.marks, b.marks] and a.text in both.text and b.text in both.text
    assert "text/vnd.mermaid" not in both._repr_mimebundle_()[0]  # one Mermaid diagram cannot hold two side by side


def test_the_chinese_edition_draws_chinese_glyphs_not_boxes(zh):
    """Every Chinese character of a picture's labels is in the font matplotlib takes it from, and two
    different characters are drawn differently (a missing glyph is the same empty box for both)."""
    from matplotlib.ft2font import FT2Font

    from course_lib.pictures.plot import cjk_font_file, png, pyplot

    path = cjk_font_file()
    assert path, "no font with Chinese glyphs is installed: apt-get install fonts-wqy-microhei (.ci/run does)"
    plt = pyplot()
    assert plt.rcParams["font.family"][0] == "DejaVu Sans" and len(plt.rcParams["font.family"]) > 1
    root, store = _audit_with_three_writes()
    try:
        picture = pictures.approval(store.audit)
    finally:
        from course_lib.notes_store import remove_scratch_workspace

        store.close()
        remove_scratch_workspace(root)
    chinese = {ch for ch in picture.text if ord(ch) > 0x2E80}
    assert chinese, picture.text
    font = FT2Font(path)
    assert all(font.get_char_index(ord(ch)) for ch in chinese), [ch for ch in chinese if not font.get_char_index(ord(ch))]

    def drawn(text: str) -> bytes:
        figure = plt.figure(figsize=(0.6, 0.4))
        figure.text(0.1, 0.2, text, fontsize=14)
        return png(figure)

    assert drawn("模") != drawn("型")
    assert is_png(picture.png)


def test_a_chinese_font_installed_after_matplotlib_listed_the_fonts_is_found(monkeypatch):
    from matplotlib import font_manager

    from course_lib.pictures.plot import CJK_FONTS, cjk_fonts

    before = cjk_fonts()
    assert before, "no font with Chinese glyphs is installed: apt-get install fonts-wqy-microhei (.ci/run does)"
    cached = [entry for entry in font_manager.fontManager.ttflist if entry.name not in CJK_FONTS]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", cached)  # matplotlib's list from before the install
    assert cjk_fonts() == before
