"""A `Diagram` drawn with matplotlib: the PNG a viewer without Mermaid shows (GitHub, nbviewer,
JupyterLab before 4.1), lane for lane and arrow for arrow the same as the Mermaid text."""

from __future__ import annotations

from course_lib.pictures.plot import COLORS, check_fonts, png, pyplot, text_width
from course_lib.pictures.diagram import Diagram

SIZE = 8.5  # points
LINE = 0.19  # inches per text line
GAP = 0.16  # inches between arrows


def draw_sequence(diagram: Diagram) -> bytes:
    """The PNG of `diagram`."""
    check_fonts([diagram.title, *(label for _, label in diagram.lanes), *(a.text for a in diagram.arrows)])
    plt = pyplot()
    lanes = [lane for lane, _ in diagram.lanes]
    column = {lane: i for i, lane in enumerate(lanes)}
    # Each gap between neighbouring lanes is as wide as the widest label that must fit across it.
    gaps = [1.6] * max(1, len(lanes) - 1)
    for arrow in diagram.arrows:
        width = max(text_width(line, SIZE) for line in arrow.lines) + 0.35
        if arrow.note:
            i = min(column[arrow.source], len(gaps) - 1)
            gaps[i] = max(gaps[i], width / 2 + 0.3)
            if column[arrow.source] > 0:
                gaps[column[arrow.source] - 1] = max(gaps[column[arrow.source] - 1], width / 2 + 0.3)
        else:
            a, b = sorted((column[arrow.source], column[arrow.target]))
            for i in range(a, b):
                gaps[i] = max(gaps[i], width / (b - a))
    xs = [0.0]
    for gap in gaps[: len(lanes) - 1]:
        xs.append(xs[-1] + gap)
    heights = [len(a.lines) * LINE + GAP + (0.1 if a.note else 0.12) for a in diagram.arrows]
    total = sum(heights) + 0.9
    figure = plt.figure(figsize=(max(xs[-1] + 1.8, 4.0), total + 0.4))
    ax = figure.add_axes((0, 0, 1, 1))
    ax.set_xlim(-0.9, xs[-1] + 0.9)
    ax.set_ylim(-total, 0.45)
    ax.axis("off")
    ax.text((xs[-1]) / 2, 0.3, diagram.title, ha="center", va="center", fontsize=SIZE + 1.5)
    for (lane, label), x in zip(diagram.lanes, xs):
        ax.plot([x, x], [-0.25, -total + 0.1], color=COLORS["lane"], lw=1, ls=(0, (4, 3)), zorder=0)
        ax.text(x, -0.1, label, ha="center", va="center", fontsize=SIZE + 0.5,
                bbox=dict(boxstyle="round,pad=0.35", fc="#eef2f7", ec=COLORS["lane"]))  # fmt: skip
    y = -0.45
    for arrow, height in zip(diagram.arrows, heights):
        y -= height
        text = "\n".join(arrow.lines)
        if arrow.note:
            x = xs[column[arrow.source]]
            ax.text(x, y + height / 2 - 0.02, text, ha="center", va="center", fontsize=SIZE - 0.5, zorder=3,
                    bbox=dict(boxstyle="round,pad=0.3", fc=COLORS[arrow.style], ec="#b8a76a" if arrow.style == "link"
                              else COLORS["error"] if arrow.style == "refusal" else "#999999"))  # fmt: skip
            continue
        x0, x1 = xs[column[arrow.source]], xs[column[arrow.target]]
        color = COLORS[arrow.style]
        dashed = arrow.style in ("response", "error") and arrow.source != "app"
        ax.annotate("", xy=(x1, y), xytext=(x0, y), zorder=2,
                    arrowprops=dict(arrowstyle="->" if arrow.style == "notify" else "-|>", color=color, lw=1.2,
                                    ls="--" if dashed else "-", shrinkA=0, shrinkB=0))  # fmt: skip
        if arrow.style == "error":
            ax.plot([x1], [y], marker="x", color=color, markersize=9, mew=2, zorder=3)
        ax.text((x0 + x1) / 2, y + 0.05, text, ha="center", va="bottom", fontsize=SIZE, color="#b03a2e"
                if arrow.style == "error" else "#1b1b1b", linespacing=1.15)  # fmt: skip
    return png(figure)
