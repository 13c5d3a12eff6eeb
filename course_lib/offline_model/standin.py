"""The stand-in: the offline model varied the way real models vary, to test a course against "any model".

The offline model is one model among many; a cell that leans on its habits (`output[0]` is the call,
the exact wording of an answer, the model name echoed as sent) breaks on a real endpoint. The
stand-in is the same deterministic model with the differences real models show, all of them valid
against the openai and anthropic SDK types and under the same refusals (`course_lib.api_rules`):

- **a dated model name** in every response: `gpt-4.1` answers as `gpt-4.1-2025-04-14`, as the real
  APIs report the snapshot that served an alias (`dated`);
- **text before a call** where the API allows it, when `tool_choice` leaves the model free (a forced
  call comes alone, as Anthropic documents for `any`/`tool` and as the real APIs answer a forced
  choice): a Responses `message` item before the `function_call` items, a Messages `text` block before
  `tool_use`, Chat Completions `content` beside `tool_calls`;
- **arguments in another order and spacing**: `{"head": 20, "path": "…"}` where the offline model
  writes `{"path":"…","head":20}` (the same JSON value);
- **reworded answers with markdown and a friendly closing line**: lead-ins rephrased, tool names in
  `code`, labels in **bold**, a closing pleasantry; every quoted tool output stays exactly as the
  tool returned it (only the sentences around it change); structured outputs (a JSON format) are
  never touched;
- **a real clock**: `created_at` is the time of the answer, not a fixed date;
- **the offline model's private switches do nothing**: `metadata.course_persona` is echoed and
  ignored (a real model has no gullible mode), and a hosted `mcp` tool pointing at a server on this
  machine fails as a platform fails to reach it, HTTP 424 (a real platform cannot reach loopback).

Reasoning items come with a reasoning model's name (`COURSE_MODEL=gpt-6-luna`, `reasoning`), as offline;
ids are fresh for every request, as offline (`ids`).

A second profile, `local`, answers as a local server's Responses endpoint does (Ollama's): no state
(`previous_response_id` ignored, nothing stored), `tool_choice` ignored, calls without text beside
them, the model name as sent; the answers are reworded and the arguments reordered as above.

Use it through `course_lib.offline_model.standin_transport()` (in-process, an httpx transport) or
`python -m course_lib.offline_model --vary --port 8766` (a real HTTP server; `running_server(vary=True)`
starts one in a thread; `--vary local` / `vary="local"` for the local profile). Within `varying()`,
every answer of the offline model is varied.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from course_lib.offline_model.wording import language

PROFILES = ("hosted", "local")
_ACTIVE: ContextVar[str | None] = ContextVar("offline_model_standin", default=None)


@contextmanager
def varying(profile: str = "hosted") -> Iterator[None]:
    """Within the block, the offline model answers as the stand-in (the transport and the server wrap
    each answer): `"hosted"`, a hosted API's model (the variations above), or `"local"`, a local
    server's Responses endpoint as Ollama's answers (`local`).

    Raises:
        ValueError: an unknown profile.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown stand-in profile {profile!r}; choose from {', '.join(PROFILES)}")
    token = _ACTIVE.set(profile)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active() -> bool:
    """Whether the answer being made now is the stand-in's (either profile)."""
    return _ACTIVE.get() is not None


def local() -> bool:
    """Whether the stand-in answers as a local server does. As Ollama's `/v1/responses` (v0.13.3+,
    `openai/responses.go` and `docs/api/openai-compatibility.mdx` read at the source, 2026-08):
    stateless — `previous_response_id` is ignored without an error (the request's own `input` is all
    the model sees) and nothing is stored (`store: false` in the response); `tool_choice` is not
    supported (ignored: the model is always free, and the response says "auto"); a response with calls
    holds only the calls (the text the model wrote beside them is dropped); the model name is echoed as
    sent. (vLLM, by contrast, stores nothing unless VLLM_ENABLE_RESPONSES_API_STORE=1 and answers a
    `previous_response_id` with 404 "Response with id '…' not found."; it honours tool_choice.)"""
    return _ACTIVE.get() == "local"


def tool_choice(choice: Any) -> Any:
    """The `tool_choice` the model obeys: as sent, or "auto" on a local server that does not support it."""
    return "auto" if local() else choice


# ---- the model name -----------------------------------------------------------------------------------

# The snapshot each alias answers as (the dates the providers gave those snapshots). A name not listed
# gets STAND_IN_DATE: the point is that a response names a snapshot, not which one.
_SNAPSHOTS = {
    "gpt-4.1": "gpt-4.1-2025-04-14", "gpt-4.1-mini": "gpt-4.1-mini-2025-04-14", "gpt-4.1-nano": "gpt-4.1-nano-2025-04-14",
    "gpt-4o": "gpt-4o-2024-08-06", "gpt-4o-mini": "gpt-4o-mini-2024-07-18", "gpt-5": "gpt-5-2025-08-07",
    "gpt-5-mini": "gpt-5-mini-2025-08-07", "gpt-5-nano": "gpt-5-nano-2025-08-07", "o3": "o3-2025-04-16",
    "o4-mini": "o4-mini-2025-04-16", "claude-sonnet-4-5": "claude-sonnet-4-5-20250929",
    "claude-opus-4-1": "claude-opus-4-1-20250805", "claude-haiku-4-5": "claude-haiku-4-5-20251001",
}  # fmt: skip
STAND_IN_DATE = "2026-01-01"
_DATED = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8})$")


def dated(model: str) -> str:
    """The snapshot name a real endpoint reports for `model`: `gpt-4.1` → `gpt-4.1-2025-04-14`; a name
    already dated stays; another gets `STAND_IN_DATE` (`-20260101` for a Claude name, as Anthropic dates)."""
    if _DATED.search(model):
        return model
    if model in _SNAPSHOTS:
        return _SNAPSHOTS[model]
    return f"{model}-{STAND_IN_DATE.replace('-', '')}" if model.startswith("claude") else f"{model}-{STAND_IN_DATE}"


def now() -> int:
    """`created_at` as a real endpoint gives it: the time of the answer."""
    return int(time.time())


# ---- arguments -------------------------------------------------------------------------------------------


def arguments_text(arguments: dict[str, Any]) -> str:
    """The arguments as JSON text with the keys in reverse order and spaces after `:` and `,` (the same
    JSON value the offline model writes as `{"path":"…","head":20}`)."""
    return json.dumps(dict(reversed(list(arguments.items()))), ensure_ascii=False)


# ---- words -----------------------------------------------------------------------------------------------

_CLOSINGS = {
    "en": ("Let me know if you'd like anything else!", "Happy to help with anything else you need. 😊",
           "I hope this helps. Just ask if you want more!"),
    "zh": ("如果还需要别的，随时告诉我！", "希望这对你有帮助，还有问题尽管问。😊", "需要更多内容的话，再叫我就好！"),
}  # fmt: skip

# Lead-in sentences of the offline model's answers (`wording`), rephrased; the quoted text after them is kept.
_REWORDS = {
    "en": [
        (re.compile(r"^Here (?:is|are) (.+), as returned by (\S+):$", re.M), r"I used `\2` to read \1. Here's what it returned:"),
        (re.compile(r"^Here is what (\S+) returned for (.+):$", re.M), r"`\1` returned this for \2:"),
        (re.compile(r"^The tool (\S+) reported an error (.+)\.$", re.M), r"Unfortunately, `\1` reported an error \2."),
        (re.compile(r"^Error code: (.+)$", re.M), r"- **Error code:** `\1`"),
        (re.compile(r"^Error message: (.+)$", re.M), r"- **Error message:** \1"),
        (re.compile(r"^From your notes:$", re.M), r"Here's what I found in your notes:"),
        (re.compile(r"^Sources: (.+)$", re.M), r"**Sources:** \1"),
        (re.compile(r"^What to try next: (.+)$", re.M), r"**Next step:** \1"),
    ],
    "zh": [
        (re.compile(r"^以下是 (.+)，由 (\S+) 返回：$", re.M), r"我用 `\2` 读取了 \1，结果如下："),
        (re.compile(r"^以下是 (\S+) 针对 (.+)返回的内容：$", re.M), r"`\1` 针对 \2返回了以下内容："),
        (re.compile(r"^错误代码：(.+)$", re.M), r"- **错误代码**：`\1`"),
        (re.compile(r"^错误信息：(.+)$", re.M), r"- **错误信息**：\1"),
        (re.compile(r"^根据你的笔记：$", re.M), r"我在你的笔记里找到了这些："),
        (re.compile(r"^来源：(.+)$", re.M), r"**来源**：\1"),
        (re.compile(r"^下一步：(.+)$", re.M), r"**下一步**：\1"),
    ],
}  # fmt: skip


def _pick(options: tuple[str, ...], seed: str) -> str:
    return options[int(hashlib.sha256(seed.encode("utf-8")).hexdigest(), 16) % len(options)]


def reword(text: str, quoted: Iterable[str] = ()) -> str:
    """`text` (an answer of the offline model) as another model would put it: the lead-in sentences
    rephrased (only whole lines that are not part of a quoted tool output, `quoted`), markdown, and a
    closing line in the answer's language."""
    lang = language(text)
    kept = {}
    for i, quote in enumerate(sorted(set(q for q in quoted if q and q in text), key=len, reverse=True)):
        marker = f"\x00{i}\x00"
        kept[marker] = quote
        text = text.replace(quote, marker)
    for pattern, replacement in _REWORDS[lang]:
        text = pattern.sub(replacement, text)
    for marker, quote in kept.items():
        text = text.replace(marker, quote)
    return f"{text}\n\n{_pick(_CLOSINGS[lang], text)}"


def preamble(calls: list[tuple[str, dict]], lang: str) -> str:
    """The sentence a model writes before its calls (`calls`: (tool name, arguments) pairs)."""
    names = ", ".join(dict.fromkeys(f"`{name}`" for name, _ in calls))
    paths = [str(arguments["path"]) for _, arguments in calls if isinstance(arguments.get("path"), str) and arguments["path"]]
    if lang == "zh":
        return f"好的，我先用 {names} 查看 {'、'.join(paths)}。" if paths else f"好的，我先调用 {names}。"
    return f"Sure! I'll use {names} to look at {', '.join(paths)} first." if paths else f"Sure! Let me call {names} first."


def free_choice(tool_choice: Any) -> bool:
    """Whether `tool_choice` leaves the model free to write text before a call: absent, "auto", or
    allowed tools in "auto" mode."""
    if tool_choice is None or tool_choice == "auto":
        return True
    return isinstance(tool_choice, dict) and tool_choice.get("type") == "allowed_tools" and tool_choice.get("mode") == "auto"


def latest_user_language(messages: Any) -> str:
    """The language of the latest user message of a request's `input` / `messages` (str or items)."""
    if isinstance(messages, str):
        return language(messages)
    for item in reversed(messages if isinstance(messages, list) else []):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return language(content)
            if isinstance(content, list):
                texts = [part.get("text", "") for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)]
                if texts:
                    return language("\n".join(texts))
    return "en"


def _tool_texts(items: list[dict]) -> list[str]:
    """The texts of the tool results in a request, as sent and as the model reads them (quoted answers
    keep them exactly)."""
    from course_lib.offline_model.tool_output import read_output  # here: it is only needed for an answer

    texts = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("kind") == "output" and isinstance(item.get("text"), str):  # a parsed item
            texts.append(item["text"])
        elif item.get("type") == "function_call_output":  # a Responses input item as sent
            output = item.get("output")
            parts = output if isinstance(output, list) else [{"text": output}]
            texts += [part["text"] for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str)]
    return texts + [read_output(text).text for text in texts]


# ---- the envelopes -------------------------------------------------------------------------------------


def vary_responses(body: dict, items: list[dict], output: list[dict], structured: bool) -> list[dict]:
    """A Responses output as the stand-in gives it (before reasoning is added): arguments reordered,
    answers reworded (unless `structured`), a message before the calls when the choice is free."""
    quoted = _tool_texts(items)
    if local() and any(item["type"] == "function_call" for item in output):
        output = [item for item in output if item["type"] != "message"]  # Ollama: calls only, no text beside them
    varied = []
    for item in output:
        if item["type"] == "function_call":
            item = {**item, "arguments": arguments_text(json.loads(item["arguments"]))}
        elif item["type"] == "message" and not structured:
            content = [{**part, "text": reword(part["text"], quoted)} if part.get("type") == "output_text" else part
                       for part in item["content"]]  # fmt: skip
            item = {**item, "content": content}
        varied.append(item)
    calls = [(item["name"], json.loads(item["arguments"])) for item in varied if item["type"] == "function_call"]
    if calls and not local() and not any(item["type"] == "message" for item in varied) and free_choice(body.get("tool_choice")):
        first = next(i for i, item in enumerate(varied) if item["type"] == "function_call")
        lead = {"type": "message", "id": "msg_" + hashlib.sha256(varied[first]["id"].encode()).hexdigest()[:24],
                "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": preamble(calls, latest_user_language(body.get("input"))),
                             "annotations": [], "logprobs": []}]}  # fmt: skip
        varied.insert(first, lead)
    return varied


def vary_chat(body: dict, items: list[dict], completion: dict, structured: bool) -> dict:
    """A ChatCompletion as the stand-in gives it: dated model, real clock, arguments reordered, the
    answer reworded (unless `structured`), a sentence beside the calls when the choice is free."""
    message = dict(completion["choices"][0]["message"])
    calls = message.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [{**call, "function": {**call["function"],
                                  "arguments": arguments_text(json.loads(call["function"]["arguments"]))}}
                                 for call in calls]  # fmt: skip
        if message.get("content") is None and not local() and free_choice(body.get("tool_choice")):
            pairs = [(call["function"]["name"], json.loads(call["function"]["arguments"])) for call in calls]
            message["content"] = preamble(pairs, latest_user_language(body.get("messages")))
    elif isinstance(message.get("content"), str) and not structured:
        message["content"] = reword(message["content"], _tool_texts(items))
    choice = {**completion["choices"][0], "message": message}
    return {**completion, "model": completion["model"] if local() else dated(completion["model"]), "created": now(),
            "choices": [choice],
            "system_fingerprint": "fp_" + hashlib.sha256(completion["model"].encode()).hexdigest()[:10]}


def vary_message(body: dict, items: list[dict], message: dict, structured: bool) -> dict:
    """An Anthropic Message as the stand-in gives it: dated model, input keys reordered, text reworded
    (unless `structured`), a text block before the `tool_use` blocks when the choice is free."""
    quoted = _tool_texts(items)
    content = []
    for block in message["content"]:
        if block["type"] == "tool_use":
            block = {**block, "input": dict(reversed(list(block["input"].items())))}
        elif block["type"] == "text" and not structured:
            block = {**block, "text": reword(block["text"], quoted)}
        content.append(block)
    uses = [(block["name"], block["input"]) for block in content if block["type"] == "tool_use"]
    choice = (body.get("tool_choice") or {}).get("type", "auto") if isinstance(body.get("tool_choice"), (dict, type(None))) else "auto"
    if uses and not local() and not any(block["type"] == "text" for block in content) and choice == "auto":
        first = next(i for i, block in enumerate(content) if block["type"] == "tool_use")
        content.insert(first, {"type": "text", "text": preamble(uses, latest_user_language(body.get("messages"))),
                               "citations": None})
    return {**message, "model": message["model"] if local() else dated(message["model"]), "content": content}
