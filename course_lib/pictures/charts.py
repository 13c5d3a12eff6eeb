"""Charts drawn with matplotlib from what the course's modules record (see `pictures` for the list).

Each chart returns a `Picture` whose `marks` are the data drawn (one entry per bar or point) and
whose text says the same in words. The text holds no measured duration: a stored notebook's
`text/plain` must be the same on every run, so a measured chart says what overlapped and in what
order, and leaves the milliseconds to the picture.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from course_lib.lang import say
from course_lib.pictures.diagram import short
from course_lib.pictures.picture import Picture
from course_lib.pictures.plot import COLORS, check_fonts, png, pyplot

SIZE = 9


# ---- 07: one turn's calls on a measured time axis ------------------------------------------------


@dataclass(frozen=True)
class Bar:
    """One call drawn on a timeline: its row, when it started and ended (seconds from the turn's
    first start; None: never executed), and how it ended ("ok" or the error code)."""

    group: str
    call_id: str
    tool: str
    start: float | None
    end: float | None
    outcome: str


def timeline(turns: Any, *, title: str | None = None, unit: float | None = None) -> Picture:
    """See `pictures.timeline`.

    Raises:
        ValueError: `turns` holds no execution, or `unit` is not positive.
    """
    if unit is not None and unit <= 0:
        raise ValueError(say("unit is a step of time in seconds, above 0", "unit 是以秒计的时间步长，必须大于 0"))
    groups = turns if isinstance(turns, dict) else {say("calls", "调用"): turns}
    bars: list[Bar] = []
    for group, executions in groups.items():
        unique = list({id(e): e for e in executions}.values())  # a verbatim repeat is the same execution
        starts = [e.started for e in unique if e.started is not None]
        zero = min(starts) if starts else 0.0
        for e in unique:
            ran = e.started is not None and e.ended is not None
            start, end = (_step(e.started - zero, unit), _step(e.ended - zero, unit)) if ran else (None, None)
            bars.append(Bar(str(group), e.call_id, e.tool, start, end, "ok" if e.ok else str(e.error_code)))
    if not bars:
        raise ValueError(say("no execution to draw: pass the list execute_batch returned",
                             "没有可画的执行：请传入 execute_batch 返回的列表"))  # fmt: skip
    name = title or say("the calls of one turn, on a measured time axis", "一轮中的调用，按实测时间排列")
    return Picture(_timeline_text(name, bars, groups), lambda: _draw_timeline(name, bars, unit), marks=bars)


def _step(seconds: float, unit: float | None) -> float:
    return seconds if unit is None else round(round(seconds / unit) * unit, 9)


def waves_of(bars: list[Bar]) -> list[list[Bar]]:
    """The bars that overlapped in time, grouped (in the order they started): a wave ran together."""
    waves: list[list[Bar]] = []
    end = None
    for bar in sorted((b for b in bars if b.start is not None), key=lambda b: (b.start, b.end)):
        if waves and end is not None and bar.start < end:
            waves[-1].append(bar)
            end = max(end, bar.end)
        else:
            waves.append([bar])
            end = bar.end
    return waves


def _timeline_text(name: str, bars: list[Bar], groups: dict[Any, Any]) -> str:
    lines = [name]
    for group in map(str, groups):
        mine = [b for b in bars if b.group == group]
        waves = " → ".join("[" + " ".join(b.call_id for b in wave) + "]" for wave in waves_of(mine))
        lines.append(f"  {group}: {waves}")
        lines += [f"    {b.call_id}: {say('not executed', '未执行')} ({b.outcome})" for b in mine if b.start is None]
    lines.append(say("  […]: calls whose bars overlap (they ran at the same time); →: one after another",
                     "  […]：条形重叠的调用（同时运行）；→：一个接一个"))  # fmt: skip
    return "\n".join(lines)


def _draw_timeline(name: str, bars: list[Bar], unit: float | None) -> bytes:
    check_fonts([name, *(b.group for b in bars)])
    plt = pyplot()
    groups = list(dict.fromkeys(b.group for b in bars))
    rows = [(g, b) for g in groups for b in bars if b.group == g]
    figure, ax = plt.subplots(figsize=(8, 0.9 + 0.34 * len(rows) + 0.25 * len(groups)))
    labels, y = [], 0
    ends = [b.end for b in bars if b.end is not None] or [1.0]
    for group in groups:
        mine = [b for b in bars if b.group == group]
        ax.text(0, -y + 0.55, group, fontsize=SIZE + 0.5, va="bottom")
        for bar in mine:
            if bar.start is None:
                ax.plot([0], [-y], marker="x", color=COLORS["error"], markersize=8, mew=2)
            else:
                color = COLORS["ok"] if bar.outcome == "ok" else COLORS["error"]
                ax.barh(-y, max(bar.end - bar.start, max(ends) / 300), left=bar.start, height=0.6, color=color, alpha=0.8)
            labels.append((-y, f"{short(bar.call_id, 14)}  {bar.tool}" + ("" if bar.outcome == "ok" else f" · {bar.outcome}")))
            y += 1
        y += 0.7
    ax.set_yticks([p for p, _ in labels], [text for _, text in labels], fontsize=SIZE - 0.5)
    ax.set_ylim(-y + 0.4, 1.2)
    ax.set_xlim(0, max(ends) * 1.05)
    ax.set_xlabel(say("seconds since the turn's first call started (measured)", "从本轮第一个调用开始算起的秒数（实测）")
                  + (say(", rounded to {u:g} s", "，四舍五入到 {u:g} 秒", u=unit) if unit else ""), fontsize=SIZE)
    ax.set_title(name, fontsize=SIZE + 1.5)
    ax.grid(axis="x", alpha=0.3)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    return png(figure)


# ---- 05: the waits a retry policy drew -------------------------------------------------------------


@dataclass(frozen=True)
class Try:
    """One attempt: when it started (the waits before it, added up), the wait before it, that wait's
    ceiling under the policy (None: no policy given, or the first attempt), and how it ended."""

    number: int
    at: float
    waited: float
    ceiling: float | None
    outcome: str


def retries(outcome: Any, policy: Any = None, *, title: str | None = None) -> Picture:
    """See `pictures.retries`."""
    tries, at = [], 0.0
    for attempt in outcome.attempts:
        at += attempt.waited
        ceiling = policy.ceiling(attempt.number - 1) if policy is not None and attempt.number > 1 else None
        tries.append(Try(attempt.number, round(at, 3), attempt.waited, ceiling, attempt.outcome))
    name = title or say("attempts and the waits drawn between them", "各次尝试，以及其间抽到的等待")
    lines = [name]
    for t in tries:
        if t.number > 1:
            bound = "" if t.ceiling is None else say(" (ceiling {c:g} s)", "（上限 {c:g} 秒）", c=t.ceiling)
            lines.append("  " + say("wait {w:.3f} s", "等待 {w:.3f} 秒", w=t.waited) + bound)
        lines.append("  " + say("attempt {n} at {at:.3f} s → {o}", "第 {n} 次尝试，{at:.3f} 秒 → {o}", n=t.number, at=t.at,
                                o=t.outcome))  # fmt: skip
    lines.append("  " + say("stopped: {why}", "停止：{why}", why=outcome.stopped_because))
    budget = getattr(policy, "budget", None)
    return Picture("\n".join(lines), lambda: _draw_retries(name, tries, outcome.stopped_because, budget), marks=tries)


def _draw_retries(name: str, tries: list[Try], why: str, budget: float | None) -> bytes:
    check_fonts([name, why])
    plt = pyplot()
    figure, ax = plt.subplots(figsize=(8, 2.6))
    for t in tries:
        if t.number > 1:
            begin = t.at - t.waited
            if t.ceiling is not None:
                ax.barh(0, t.ceiling, left=begin, height=0.5, fill=False, ec=COLORS["lane"], ls="--", lw=1)
            ax.barh(0, t.waited, left=begin, height=0.5, color="#9cc3e6")
            ax.text(begin + t.waited / 2, 0, f"{t.waited:.3f}s", ha="center", va="center", fontsize=SIZE - 1)
        ok = t.outcome == "ok"
        ax.plot([t.at], [0.55], marker="o" if ok else "X", color=COLORS["ok"] if ok else COLORS["error"], markersize=10)
        ax.text(t.at, 0.78, f"#{t.number} {t.outcome}", ha="center", fontsize=SIZE - 0.5)
    top = max([t.at for t in tries] + [t.at - t.waited + (t.ceiling or 0) for t in tries] + [0.1])
    if budget is not None and budget <= top * 1.5:
        ax.axvline(budget, color=COLORS["error"], ls=":", lw=1)
        ax.text(budget, -0.5, say("budget", "预算"), color=COLORS["error"], fontsize=SIZE - 1, ha="center")
    ax.set_xlim(-top * 0.05, top * 1.12)
    ax.set_ylim(-0.7, 1.1)
    ax.set_yticks([])
    ax.set_xlabel(say("seconds of waiting (filled: drawn; dashed: the ceiling it was drawn under)",
                      "等待的秒数（实心：抽到的；虚线：抽取时的上限）"), fontsize=SIZE)  # fmt: skip
    ax.set_title(f"{name}\n{why}", fontsize=SIZE + 0.5)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    return png(figure)


# ---- 04b: a streamed answer's events ---------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """One event of a stream: its number (`sequence_number`, else its position), its type, and the
    output item it belongs to (None: the response itself)."""

    number: int
    type: str
    output_index: int | None
    size: int = 0  # a delta's length in characters


def stream(turn: Any, *, title: str | None = None) -> Picture:
    """See `pictures.stream`.

    Raises:
        ValueError: no events.
    """
    raw = _events_of(turn)
    if not raw:
        raise ValueError(say("no events to draw", "没有可画的事件"))
    events, rows = [], {}
    for position, event in enumerate(raw):
        index = event.get("output_index")
        number = event.get("sequence_number", position)
        events.append(Event(number, str(event.get("type")), index, len(event.get("delta") or "")))
        if event.get("type") == "response.output_item.added":
            item = event.get("item") or {}
            rows[index] = " ".join(str(x) for x in (f"[{index}]", item.get("type"), item.get("name"),
                                                    short(item.get("call_id")) if item.get("call_id") else None) if x)  # fmt: skip
    name = title or say("the stream's events, by output item", "流中的事件，按输出项分行")
    lines = [name, "  " + say("response: ", "响应：") + _runs([e for e in events if e.output_index is None])]
    for index in sorted(i for i in {e.output_index for e in events} if i is not None):
        lines.append(f"  {rows.get(index, f'[{index}]')}: {_runs([e for e in events if e.output_index == index])}")
    return Picture("\n".join(lines), lambda: _draw_stream(name, events, rows), marks=events)


def _events_of(turn: Any) -> list[dict[str, Any]]:
    if isinstance(turn, str):
        from course_lib.pictures.record import stream_events

        return stream_events(turn)
    events = getattr(turn, "events", turn)
    return [e if isinstance(e, dict) else e.model_dump(mode="json") for e in events]


def _runs(events: list[Event]) -> str:
    """Consecutive events of one type as one entry: `delta ×5 (#3–#7)`."""
    parts: list[tuple[str, int, int, int]] = []
    for e in events:
        kind = e.type.removeprefix("response.")
        kind = kind if "." in kind else e.type  # an item's `output_item.added`, but the response's own `response.created`
        if parts and parts[-1][0] == kind and "delta" in kind:
            parts[-1] = (kind, parts[-1][1], e.number, parts[-1][3] + 1)
        else:
            parts.append((kind, e.number, e.number, 1))
    return ", ".join(f"{k} #{a}" if n == 1 else f"{k} ×{n} (#{a}–#{b})" for k, a, b, n in parts)


_SHAPES = {"added": ("^", "#1f5f99"), "delta": ("o", "#5aa0d8"), "done": ("D", "#2e7d32"), "completed": ("s", "#2e7d32"),
           "created": ("s", "#9aa5b1"), "in_progress": ("s", "#9aa5b1"), "error": ("X", "#c0392b"),
           "failed": ("X", "#c0392b"), "incomplete": ("X", "#c0392b")}  # fmt: skip


def _shape(kind: str) -> tuple[str, str]:
    last = kind.rsplit(".", 1)[-1]
    if kind.endswith("output_item.done"):
        return "s", "#2e7d32"
    return _SHAPES.get(last, ("|", "#555555"))


def _draw_stream(name: str, events: list[Event], rows: dict[Any, str]) -> bytes:
    check_fonts([name])
    plt = pyplot()
    indices = sorted(i for i in {e.output_index for e in events} if i is not None)
    order = [None, *indices]
    figure, ax = plt.subplots(figsize=(9, 1.2 + 0.55 * len(order)))
    shown: set[str] = set()
    for e in events:
        marker, color = _shape(e.type)
        y = -order.index(e.output_index)
        label = e.type.removeprefix("response.")
        ax.plot([e.number], [y], marker=marker, color=color, markersize=5 + min(e.size, 12) / 2 if "delta" in e.type else 8,
                ls="", label=None if label in shown else label)  # fmt: skip
        shown.add(label)
    ax.set_yticks([-i for i in range(len(order))], [say("response", "响应") if i is None else rows.get(i, f"[{i}]")
                                                    for i in order], fontsize=SIZE - 0.5)  # fmt: skip
    ax.set_ylim(-len(order) + 0.4, 0.6)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel(say("event number (sequence_number), in the order the events arrived",
                      "事件序号（sequence_number），按到达的顺序"), fontsize=SIZE)  # fmt: skip
    ax.set_title(name, fontsize=SIZE + 1.5)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=SIZE - 2, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return png(figure)


# ---- 09: an assistant against its worse variants ---------------------------------------------------


@dataclass(frozen=True)
class Rate:
    """One metric of one version: passed of total (rate None: nothing to count)."""

    metric: str
    version: str
    passed: int
    total: int

    @property
    def rate(self) -> float | None:
        return self.passed / self.total if self.total else None


def comparison(results: dict[str, Any], *, title: str | None = None) -> Picture:
    """See `pictures.comparison`."""
    from course_lib.comparison import VERSION_LABELS_ZH, comparison_table
    from course_lib.evaluation import metric_label

    rates = [Rate(metric_label(m.name), say(version, VERSION_LABELS_ZH.get(version, version)), m.passed, m.total)
             for version, (_traces, metrics) in results.items() for m in metrics]  # fmt: skip
    name = title or say("each metric, version by version", "每个指标，逐个版本比较")
    return Picture(name + "\n" + comparison_table(results), lambda: _draw_comparison(name, rates), marks=rates)


def _draw_comparison(name: str, rates: list[Rate]) -> bytes:
    check_fonts([name, *(r.metric for r in rates), *(r.version for r in rates)])
    plt = pyplot()
    metrics = list(dict.fromkeys(r.metric for r in rates))
    versions = list(dict.fromkeys(r.version for r in rates))
    height = 0.8 / len(versions)
    palette = ["#1f5f99", "#e08e0b", "#c0392b", "#6b6b6b", "#2e7d32"]
    figure, ax = plt.subplots(figsize=(8.5, 0.8 + 0.32 * len(metrics) * len(versions)))
    for v, version in enumerate(versions):
        for m, metric in enumerate(metrics):
            rate = next(r for r in rates if r.metric == metric and r.version == version)
            y = -m - v * height
            if rate.rate is None:
                ax.text(0.01, y, say("n/a", "不适用"), va="center", fontsize=SIZE - 1, color="#6b6b6b")
                continue
            ax.barh(y, rate.rate, height=height * 0.9, color=palette[v % len(palette)], label=version if m == 0 else None)
            ax.text(rate.rate + 0.01, y, f"{rate.rate:.0%} ({rate.passed}/{rate.total})", va="center", fontsize=SIZE - 1.5)
    ax.set_yticks([-m - height * (len(versions) - 1) / 2 for m in range(len(metrics))], metrics, fontsize=SIZE)
    ax.set_xlim(0, 1.22)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1], ["0%", "25%", "50%", "75%", "100%"])
    ax.set_title(name, fontsize=SIZE + 1.5)
    ax.legend(fontsize=SIZE - 1, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.grid(axis="x", alpha=0.3)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return png(figure)


# ---- 06: the approval pause ------------------------------------------------------------------------


@dataclass(frozen=True)
class Pause:
    """One action of the audit log: when a person was first asked for it (`asked`: its first
    APPROVAL_REQUIRED), how it ended and when (None: it never did), every attempt's time and result."""

    action_id: str
    tool: str
    asked: float | None
    ended: float | None
    outcome: str | None
    attempts: tuple[tuple[float, str], ...]


def approval(audit: Any, *, title: str | None = None) -> Picture:
    """See `pictures.approval`.

    Raises:
        ValueError: the log holds no record.
    """
    records = list(getattr(audit, "records", audit))
    if not records:
        raise ValueError(say("the audit log holds no record yet", "审计日志里还没有记录"))
    zero = records[0].when
    pauses = []
    for action in dict.fromkeys(r.action_id or "-" for r in records):
        mine = [r for r in records if (r.action_id or "-") == action]
        asked = next((r.when - zero for r in mine if r.result == "APPROVAL_REQUIRED"), None)
        final = next((r for r in mine if r.result != "APPROVAL_REQUIRED"), None)
        pauses.append(Pause(action, mine[0].tool, asked, None if final is None else final.when - zero,
                            None if final is None else final.result, tuple((r.when - zero, r.result) for r in mine)))  # fmt: skip
    name = title or say("each write: asked, waiting for a person, done", "每次写入：请求批准、等人决定、结束")
    lines = [name]
    for p in pauses:
        waited = "" if p.asked is None or p.ended is None else say(", waited {s:g} s", "，等了 {s:g} 秒", s=p.ended - p.asked)
        end = (say("still waiting", "仍在等待") if p.outcome is None
               else say("{o} +{t:g}s", "{o}（审计日志的结果）+{t:g}s", o=p.outcome, t=p.ended))
        asked = say("never asked", "没有请求批准") if p.asked is None else say("asked +{s:g}s", "请求 +{s:g}s", s=p.asked)
        lines.append(f"  {p.action_id} {p.tool}: {asked} → {end}{waited}")
    return Picture("\n".join(lines), lambda: _draw_approval(name, pauses), marks=pauses)


def _draw_approval(name: str, pauses: list[Pause]) -> bytes:
    check_fonts([name])
    plt = pyplot()
    figure, ax = plt.subplots(figsize=(8.5, 1.1 + 0.45 * len(pauses)))
    last = max([t for p in pauses for t, _ in p.attempts] + [1.0])
    for row, p in enumerate(pauses):
        y = -row
        if p.asked is not None:
            end = p.ended if p.ended is not None else last
            ax.barh(y, max(end - p.asked, last / 400), left=p.asked, height=0.45, color="#f3d27a" if p.ended is not None
                    else "none", ec="#b8860b", hatch=None if p.ended is not None else "//")  # fmt: skip
        for t, result in p.attempts:
            color = COLORS["ok"] if result == "ok" else "#b8860b" if result == "APPROVAL_REQUIRED" else COLORS["error"]
            marker = "o" if result == "ok" else "D" if result == "APPROVAL_REQUIRED" else "X"
            # how it ended is drawn over a request for approval a second later (a clock that ticks by seconds)
            ax.plot([t], [y], marker=marker, color=color, markersize=8, ls="", zorder=3 if marker == "D" else 4)
        if p.outcome is not None:
            ax.text(p.ended, y + 0.3, p.outcome, fontsize=SIZE - 1.5, ha="center")
    ax.set_yticks([-r for r in range(len(pauses))], [f"{short(p.action_id, 12)} {p.tool}" for p in pauses], fontsize=SIZE - 1)
    ax.set_xlabel(say("seconds on the audit log's clock (◆ APPROVAL_REQUIRED returned, bar: waiting for a person, "
                      "● ok, ✕ refused)", "审计日志时钟上的秒数（◆ 返回 APPROVAL_REQUIRED，条形：等人决定，● ok，✕ 被拒绝）"),
                  fontsize=SIZE - 0.5)  # fmt: skip
    ax.set_title(name, fontsize=SIZE + 1.5)
    ax.grid(axis="x", alpha=0.3)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    return png(figure)


# ---- 04c: several diagrams side by side ------------------------------------------------------------


def side_by_side(pictures: list[Picture], title: str | None = None) -> Picture:
    """The PNGs of `pictures` in one image, left to right; their texts one after the other."""
    if not pictures:
        raise ValueError(say("give at least one picture", "至少给一张图"))
    name = title or say("the same task, side by side", "同一个任务，并排比较")
    text = "\n\n".join([name, *(p.text for p in pictures)])
    return Picture(text, lambda: _paste([p.png for p in pictures]), marks=[p.marks for p in pictures])


def _paste(images: list[bytes]) -> bytes:
    from PIL import Image  # matplotlib's own dependency

    opened = [Image.open(io.BytesIO(data)).convert("RGB") for data in images]
    gap = 24
    canvas = Image.new("RGB", (sum(i.width for i in opened) + gap * (len(opened) - 1), max(i.height for i in opened)),
                       "white")  # fmt: skip
    x = 0
    for image in opened:
        canvas.paste(image, (x, 0))
        x += image.width + gap
    buffer = io.BytesIO()
    canvas.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()

