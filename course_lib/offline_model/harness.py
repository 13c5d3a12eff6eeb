"""What an agent harness writes around the text a model reads, told apart from the text itself.

Claude Code (the CLI the Claude Agent SDK drives) appends notes of its own to what it sends the
model: a `<system-reminder>…</system-reminder>` block after a tool's output (the tokens left, a
reminder about the task) and before the user's words (the environment, the date). A model reads them
as the harness's notes, never as what the tool returned: the offline model does the same, so a
read's structured content that arrives as JSON with a reminder after it is still read as that JSON.
"""

from __future__ import annotations

import re

_REMINDER = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.S)


def without_notes(text: str) -> str:
    """`text` without the harness's `<system-reminder>` blocks (and the blank lines around them);
    text with none comes back unchanged."""
    if "<system-reminder>" not in text:
        return text
    return _REMINDER.sub("\n", text).strip("\n")
