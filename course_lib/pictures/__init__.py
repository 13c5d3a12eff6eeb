"""Pictures drawn from what a run recorded: never typed, always next to the JSON they summarize.

    from course_lib import pictures
    pictures.sequence(course)               # everything the course recorded so far (00: the first run)
    pictures.sequence(result, course)       # one run of a loop, with the wires it ran on
    pictures.sequence(run)                  # a framework's run (09b): both wires, as tapped

Each returns a `Picture`; Jupyter shows it as Mermaid where it can (JupyterLab ≥ 4.1, Notebook
≥ 7.1), as a PNG drawn with matplotlib elsewhere (GitHub, nbviewer), as text in a terminal.

    sequence     a sequence diagram: model · app · MCP servers (· person), an arrow per message
    side_by_side the same task in several envelopes (04c): one diagram per run, side by side
    timeline     one turn's calls on a measured time axis, e.g. together against one at a time (07)
    retries      the waits a retry policy drew, under their ceilings (05)
    stream       a streamed answer's events, one row per output_index (04b)
    comparison   an assistant against its worse variants, metric by metric (09)
    approval     each write's pause for a person, on the audit log's clock (06)

Labels follow the edition (`lang.say`); wire names (`function_call`, `tools/call`, ids) never change.
"""

from __future__ import annotations

from typing import Any

from course_lib.pictures.picture import Picture

__all__ = ["Picture", "approval", "comparison", "retries", "sequence", "side_by_side", "stream", "timeline"]


def sequence(*records: Any, title: str | None = None) -> Picture:
    """The sequence diagram of a recorded run (see `record.gather` for what `records` may be).
    `picture.marks` is the `diagram.Diagram`: its lanes and arrows, in order.

    Raises:
        record.NotARecord: nothing given, or something the course does not record a run in.
    """
    from course_lib.pictures.drawing import draw_sequence
    from course_lib.pictures.mermaid import to_mermaid
    from course_lib.pictures.record import gather
    from course_lib.pictures.diagram import as_text, build

    diagram = build(gather(*records), title)
    return Picture(as_text(diagram), lambda: draw_sequence(diagram), mermaid=to_mermaid(diagram), marks=diagram)


def side_by_side(*pictures: Picture, title: str | None = None) -> Picture:
    """Several sequence diagrams in one picture, left to right (04c: one task in three envelopes)."""
    from course_lib.pictures.charts import side_by_side as draw

    return draw(list(pictures), title)


def timeline(turns: Any, *, title: str | None = None, unit: float | None = None) -> Picture:
    """Calls on a measured time axis: `turns` maps a label to the executions of one turn
    (`parallel.execute_batch`'s list). `unit` rounds every measured time to that step before drawing
    (e.g. the tool's latency: a stored picture then stays the same from run to run)."""
    from course_lib.pictures.charts import timeline as draw

    return draw(turns, title=title, unit=unit)


def retries(outcome: Any, policy: Any = None, *, title: str | None = None) -> Picture:
    """The attempts of one `retry.execute_with_retries` outcome and the waits drawn between them,
    each under its ceiling from `policy` (a `retry.RetryPolicy`) when given."""
    from course_lib.pictures.charts import retries as draw

    return draw(outcome, policy, title=title)


def stream(turn: Any, *, title: str | None = None) -> Picture:
    """A streamed answer's events (a `streaming.StreamAssembler`, one of `StreamedRequests.turns`, or
    the captured event-stream text), one row per `output_index`, in the order they arrived."""
    from course_lib.pictures.charts import stream as draw

    return draw(turn, title=title)


def comparison(results: Any, *, title: str | None = None) -> Picture:
    """`comparison.compare`'s results: each metric's rate, one bar per version."""
    from course_lib.pictures.charts import comparison as draw

    return draw(results, title=title)


def approval(audit: Any, *, title: str | None = None) -> Picture:
    """Each action of an audit log (`notes_store.AuditLog`, or its `records`) on the log's own clock:
    when the write was asked for, how long it waited for a person, and how it ended."""
    from course_lib.pictures.charts import approval as draw

    return draw(audit, title=title)
