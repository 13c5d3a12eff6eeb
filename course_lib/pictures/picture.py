"""A picture as Jupyter shows it: one output holding the same picture in several forms, so every
viewer shows one it can draw.

    text/vnd.mermaid   JupyterLab ≥ 4.1 and Notebook ≥ 7.1 draw it (rank 61, before PNG's 90);
                       nbconvert ≥ 7.17's HTML export too (with mermaid.js from a CDN)
    image/png          the same picture drawn by matplotlib: GitHub, nbviewer, VS Code, JupyterLab < 4.1
    text/plain         the same arrows or marks as lines of text: a terminal, a text export, nbval

A chart has no Mermaid form. The PNG is drawn when Jupyter asks for it, so building a picture in a
test costs no matplotlib. Everything stored in `text/plain` and `text/vnd.mermaid` is deterministic
(no timestamps, no measured durations): nbval compares those; it does not compare images.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any


class Picture:
    """One picture: `text` (always), `mermaid` (a sequence diagram), `png` (drawn on first use), and
    `marks`: the data each arrow or mark was drawn from, for a reader (or a test) to check."""

    def __init__(self, text: str, draw: Callable[[], bytes], *, mermaid: str | None = None, marks: Any = None,
                 width: int | None = None) -> None:  # fmt: skip
        self.text, self.mermaid, self.marks = text, mermaid, marks
        self._draw, self._width = draw, width

    @cached_property
    def png(self) -> bytes:
        """The PNG bytes (drawn once)."""
        return self._draw()

    def save(self, path: str | Path) -> Path:
        """Write the PNG to `path`; returns it."""
        target = Path(path)
        target.write_bytes(self.png)
        return target

    def __repr__(self) -> str:
        return self.text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
        data: dict[str, Any] = {"text/plain": self.text, "image/png": base64.b64encode(self.png).decode("ascii")}
        if self.mermaid is not None:
            data["text/vnd.mermaid"] = self.mermaid
        return data, {}
