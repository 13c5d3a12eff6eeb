"""Anthropic extended thinking: a `thinking` block before the answer when the request enables it.

`thinking: {"type": "enabled", "budget_tokens": N}` (N ≥ 1024 and below `max_tokens`) or
`{"type": "adaptive"}` puts a thinking block first in the reply's content, in the SDK's shape
(`anthropic.types.ThinkingBlock`: `thinking`, `signature`, `type`); `{"type": "disabled"}` or no
`thinking` puts none. With `display: "omitted"` the block keeps its signature and an empty text.

The offline model thinks nothing it could hide: its thinking is its plan said plainly ("I call
read_text_file with {…}.", "The tool results are in: I answer from them and nothing else."), in
the request's language. The signature is opaque and deterministic, made from the text (the real
API's is a check that the block was not edited; this model does not check blocks sent back).

The 400s, in the real API's words: "thinking.enabled.budget_tokens: Input should be greater than or
equal to 1024" (https://github.com/themaximalist/llm.js/issues/30) and "`max_tokens` must be
greater than `thinking.budget_tokens`. Please consult our documentation at …"
(https://github.com/anthropics/claude-code/issues/8756).
"""

from __future__ import annotations

import base64
import hashlib
import json

from course_lib.offline_model.wording import say

MIN_BUDGET = 1024
_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"


class ThinkingError(ValueError):
    """A `thinking` setting the real API refuses (its message is the API's)."""


def thinking_config(body: dict, max_tokens: int) -> dict | None:
    """The request's thinking setting when it asks for thinking; None when it does not.

    Raises:
        ThinkingError: an unknown type, a budget below 1024, or one not below `max_tokens`.
    """
    config = body.get("thinking")
    if config is None:
        return None
    kind = config.get("type") if isinstance(config, dict) else None
    if kind == "disabled":
        return None
    if kind not in ("enabled", "adaptive"):
        raise ThinkingError(f"thinking: Input tag '{kind}' found using 'type' does not match any of the expected "
                            "tags: 'adaptive', 'disabled', 'enabled'")
    if kind == "enabled":
        budget = config.get("budget_tokens")
        if not isinstance(budget, int) or isinstance(budget, bool):
            raise ThinkingError("thinking.enabled.budget_tokens: Field required")
        if budget < MIN_BUDGET:
            raise ThinkingError(f"thinking.enabled.budget_tokens: Input should be greater than or equal to {MIN_BUDGET}")
        if max_tokens <= budget:
            raise ThinkingError(f"`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                                f"documentation at {_DOCS}")
    return config


def thought(plan: list[tuple], after_results: bool, lang: str) -> str:
    """The plan said plainly: what the model calls, or how it answers."""
    calls = [say("think_call", lang, tool=step[1], arguments=json.dumps(step[2], ensure_ascii=False))
             for step in plan if step[0] == "call"]
    if calls:
        return " ".join(calls)
    return say("think_answer" if after_results else "think_reply", lang)


def _signature(text: str) -> str:
    digest = hashlib.sha256(f"offline-model-thinking|{text}".encode()).digest()
    return base64.b64encode(digest * 2).decode()


def thinking_block(config: dict, text: str) -> dict:
    """The reply's thinking block for `text` (empty when the request asks for `display: "omitted"`)."""
    shown = "" if config.get("display") == "omitted" else text
    return {"type": "thinking", "thinking": shown, "signature": _signature(text)}
