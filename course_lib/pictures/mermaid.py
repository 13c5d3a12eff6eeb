"""A `Diagram` as Mermaid sequence-diagram text (`text/vnd.mermaid`), which JupyterLab ≥ 4.1 and
Notebook ≥ 7.1 draw in the browser.

Arrows: `->>` a request, `-->>` its answer, `-)` a notification (no id: no answer), `--x` / `-x`
an error or a refusal. Notes sit over the app (the link it keeps, a call it refused) or over the
person (a decision still waiting). Label text is escaped with Mermaid's entity codes (`#59;` for
`;`, `#35;` for `#`...): a label is data from the wire, never Mermaid syntax.
"""

from __future__ import annotations

from course_lib.pictures.diagram import Diagram

ARROWS = {"request": "->>", "response": "-->>", "notify": "-)", "error": "--x"}
_ENTITIES = {"#": "#35;", ";": "#59;", "<": "#lt;", ">": "#gt;", "&": "#amp;", '"': "#quot;", "%": "#37;",
             "{": "#123;", "}": "#125;"}  # fmt: skip


def escape(text: str) -> str:
    """`text` safe inside a Mermaid message or note (entity codes for the characters Mermaid reads)."""
    return "".join(_ENTITIES.get(ch, ch) for ch in text)


def to_mermaid(diagram: Diagram) -> str:
    """The Mermaid source of `diagram`: participants in lane order, then each arrow and note."""
    names = {lane: f"L{i}" for i, (lane, _) in enumerate(diagram.lanes)}
    lines = ["sequenceDiagram", f"    title {escape(diagram.title)}"]
    lines += [f"    participant {names[lane]} as {escape(label)}" for lane, label in diagram.lanes]
    for arrow in diagram.arrows:
        text = "<br/>".join(escape(line) for line in arrow.lines)
        if arrow.note:
            lines.append(f"    Note over {names[arrow.source]}: {text}")
        else:
            style = ARROWS[arrow.style] if arrow.style != "error" or arrow.source != "app" else "-x"
            lines.append(f"    {names[arrow.source]}{style}{names[arrow.target]}: {text}")
    return "\n".join(lines) + "\n"
