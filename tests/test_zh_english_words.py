"""The 简体中文 edition speaks Chinese: its stored outputs hold no English word a learner reads as a label
or a sentence, and its prose names only the labels its outputs print.

What stays English on purpose (decided in session 5, said in README.zh-CN and the twins): wire values and
field names; tool names, descriptions, schemas, tool results and the messages the model reads; workspace
files and notes; real API, SDK, HTTP, JSON-RPC and Node messages; records (the audit log, the server log);
the recorded traces of notebook 10 and notebook 09's evaluation questions. The reader below removes those
by their form (quoted text, JSON, identifiers, codes, a message after its code or its exception, the
course's fixture text) and by `KEPT`, each with its reason; `KEPT_CELLS` names the few cells whose whole
output is kept English material. Whatever English is left is a label that needs `course_lib.lang.say` or
a catalogued string.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import anthropic.types
import mcp_types
import openai
import openai.types.chat
import openai.types.responses
import pytest

from course_lib.explorer import PANELS

REPO = Path(__file__).resolve().parents[1]
ZH = REPO / "notebooks" / "zh-CN"
TWINS = sorted(ZH.glob("[0-9]*.ipynb"))

QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|`[^`\n]*`|“[^”\n]*”|‘[^’\n]*’")
# Identifiers and codes: snake_case, camelCase, PascalCase with an inner capital, dotted / slashed names,
# ALL_CAPS codes, paths, URLs, <placeholders>, key=value and key: value pairs of a repr or a wire line.
IDENTIFIER = re.compile(r"\b\w+\([^()\n]*\)|https?://\S+|(?<![\w/])/[\w./<>~-]+|<[^<>\n]*>|[A-Za-z_]\w*(?:[._/:-]+\w+)+|\w*_\w*"
                        r"|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Z]{2,}[a-z]\w*|\b(?!(?:OK|FAIL|PASS)\b)[A-Z][A-Z0-9_]+\b"
                        r"|\b\w+=\S*|\b[a-z]+_[a-z_]+: \S+|\{[\w, ]+\}|[A-Za-z_]+…")
# JSON (a body, a panel's value, a truncated one): from its first `{"` / `[{` / `"{` to the end of the line.
JSON = re.compile(r"[\"']?[{\[]\s*[\"{].*$")
WORD = re.compile(r"(?<![\w@])[A-Za-z]{2,}(?![\w])")
# Words of code and wire data that read as English but are values: Python and JSON literals and types,
# the Responses `status` values, message roles, glossary terms kept in English (span), names of products and tools.
VALUES = frozenset({
    "True", "False", "None", "null", "true", "false", "str", "int", "dict", "list", "float", "bool", "object",
    "completed", "incomplete", "in_progress", "failed", "cancelled", "queued", "user", "assistant", "system",
    "developer", "schema", "token", "tokens", "id", "ids", "JSON", "MCP", "SDK", "API", "HTTP", "RPC", "stdio",
    "Python", "Node", "TypeScript", "Mastra", "Agents", "OpenAI", "Anthropic", "Claude", "Responses", "Chat",
    "Completions", "Messages", "Streamable", "fastmcp", "zod", "pydantic", "openai", "mcp", "anyio", "tenacity",
    "fs", "arch", "ref", "notes", "gaps", "files", "alice", "bob", "bearer", "Bearer", "venv", "span", "spans",
})  # fmt: skip
# Labels a learner reads as a verdict: never passed as "a word of the code", whatever the code contains.
LABELS = frozenset({"ok", "OK", "FAIL", "PASS", "Sources", "yes", "no", "done", "passed"})
# The course's own words the zh edition always translates (the three kinds, the executor's steps): also
# JSON values somewhere ("kind": "rule"), so never let through as a name when they stand unquoted.
COURSE_LABELS = frozenset({"rule", "value", "result", "allowlist", "parse", "permission", "approval", "execute",
                           "internal", "decision"})  # fmt: skip
KEPT: list[tuple[str, re.Pattern[str]]] = [
    ("a tool's, server's or store's message after its code (the model reads it as written)",
     re.compile(r"\b[A-Z][A-Z_]{3,}(?::| —| →) .*?(?=\s{2,}|\s\|\s|$)")),
    ("a Python exception (the course's own or a library's) and its message",
     re.compile(r"\b[A-Z]\w*(?:Error|Exception|Warning|Alias|Behavior)\b.*?(?=\s{2,}|\s\|\s|$)")),
    ("a JSON-RPC error", re.compile(r"(?:MCP error )?-32\d{3}:?\s+.*?(?=\s{2,}|\s\|\s|$)")),
    ("a real API or HTTP error", re.compile(r"Error code: \d{3} - .*|\b[1-5]\d\d:? .*?(?=\s{2,}|\s\|\s|$)")),
    ("a record: an audit log line, a server log entry", re.compile(r"^\s*\d{4}-\d\d-\d\dT\S+ .*$|服务器日志.*$")),
    ("show_trace's field names (kept: they are the trace's fields)", re.compile(r"\bstatus: \w+\s+reason: \S+")),
    ("what a tool or server returned, or the message the model read, after the label that says so",
     re.compile(r"(?:原文[）)]?|工具返回|错误信息|回答)\s*[：:].*$")),
    ("a glossed term: English with its Chinese beside it", re.compile(r"(?<![\w.])[A-Za-z][\w -]*（[^）]*[\u4e00-\u9fff][^）]*）|"
                                                                     r"（[A-Za-z][\w -]*）")),
    ("a task the model was given, as it read it (show_wire's head line; the course's tasks are English)",
     re.compile(r"^\s*(?:Show|and) the (?:first|last) \d+ lines of .*$")),  # "and …": a fixture phrase took the start
    ("an SSE or wire line, a shell command", re.compile(r"^\s*(?:data|event): .*$|^\s*[<>] (?:body|\w+:) .*$|^\s*\$ .*$")),
    ("the reference filesystem server's own messages (a real Node program)",
     re.compile(r"Secure MCP Filesystem Server.*$|Client does not support MCP Roots.*$|Access denied - .*?(?=\s{2,}|$)"
                r"|Cannot specify both head and tail parameters simultaneously|ENOENT: .*?(?=\s{2,}|$)")),
]
KEPT_CELLS = {
    ("09b_frameworks_carry_the_loop", "fw16"): "prints the Mastra script (TypeScript source)",
    ("09_capstone_notes_assistant", "521ed7c0"): "the words of an English evaluation question the answer says are missing",
    ("06b_idempotency_durable_writes_and_injection", "8c168a24"): "the email in the workspace, as the tool read it",
    ("06b_idempotency_durable_writes_and_injection", "aa6daf53"): "the store's CONFLICT message, as the model reads it",
    ("09c_traces_and_two_more_frameworks", "tr17"): "prints the LangGraph graph's source (Python), as the venv runs it",
    ("09c_traces_and_two_more_frameworks", "tr26"): "prints the Claude Agent SDK options' source (Python)",
    ("02_parsing_arguments", "61a6d2c3"): "OK is one of the answer values the check reads, beside the error codes",
    ("09_capstone_notes_assistant", "97379aeb"): "prints Grade.verdict (correct / not yet), a value code compares, "
                                                 "beside its Chinese sentence",
}


def _strings(value: object):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@cache
def fixture_phrases() -> tuple[str, ...]:
    """English sentences of the course's data (workspace files, notes, eval questions, recorded traces, the
    refusal corpus): a tool result or an answer quoting them shows them as they are. Longest first."""
    found: set[str] = set()
    for path in (REPO / "fixtures").rglob("*"):
        if path.name == "duty_table.json":
            continue  # not data shown as it is: a table of labels, kept in both editions
        if path.suffix == ".json":
            found.update(line.strip() for text in _strings(json.loads(path.read_text(encoding="utf-8")))
                         for line in text.splitlines())  # fmt: skip
        elif path.suffix in (".txt", ".md") or (path.is_file() and not path.suffix):
            found.update(re.sub(r"^[\s#>*+-]*(?:\[[ x]\]\s*)?", "", line).strip()
                         for line in path.read_text(encoding="utf-8", errors="ignore").splitlines())  # fmt: skip
    return tuple(sorted((p for p in found if " " in p and len(p) >= 12 and re.search("[A-Za-z]{3}", p)),
                        key=len, reverse=True))  # fmt: skip


@cache
def names() -> frozenset[str]:
    """Words that name things in code and on the wire: the keys and one-word values of the JSON and
    reprs the notebooks print (`"head":`, `'method': 'initialize'`), the fixtures' JSON keys and one-word
    values, and the classes a cell may print the type of (Stream, Response, CallToolResult)."""
    found = {name for module in (openai, openai.types.responses, openai.types.chat, anthropic.types, mcp_types)
             for name in dir(module) if name[:1].isupper()}  # fmt: skip
    key_or_value = re.compile(r"""['"]([A-Za-z][\w-]*)['"](?=\s*:)|(?<=:)\s*['"]([A-Za-z][\w-]*)['"]""")
    for path in [*(REPO / "notebooks").glob("[0-9]*.ipynb"), *TWINS]:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for text in [output_text(cell), "".join(cell["source"]) if cell["cell_type"] == "code" else ""]:
                found.update(word for pair in key_or_value.findall(text) for word in pair if word)
    for path in (REPO / "fixtures").rglob("*.json"):
        found.update(s for s in _strings(json.loads(path.read_text(encoding="utf-8"))) if re.fullmatch(r"[A-Za-z][\w-]*", s))
    found.update(PANELS)  # the explorer's panel names are values the checks compare (stop 18)
    return frozenset(found - LABELS - COURSE_LABELS)


def output_text(cell: dict) -> str:
    """A code cell's stored stream and text/plain outputs (a widget's text/plain is its repr: skipped)."""
    parts = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "text" in output:
            parts.append("".join(output["text"]))
        elif "text/plain" in data and "application/vnd.jupyter.widget-view+json" not in data:
            parts.append("".join(data["text/plain"]))
    return "".join(parts)


def english_words(line: str, code_words: frozenset[str] = frozenset()) -> list[str]:
    """The English words left in one output line once the kept English is taken out."""
    line = QUOTED.sub("‹›", JSON.sub("‹›", line))  # a mark, not a space: the columns stay as they were
    for phrase in fixture_phrases():
        if phrase in line:
            line = line.replace(phrase, " ")
    for _, pattern in KEPT:
        line = pattern.sub(" ", line)
    line = IDENTIFIER.sub(" ", line)
    return [w for w in WORD.findall(line) if w in LABELS or (w not in VALUES and w not in code_words and w not in names())]


def leftover(path: Path) -> dict[str, list[str]]:
    """Cell id → the output lines that still hold English, for one zh notebook."""
    found = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code" or (path.stem, cell["id"]) in KEPT_CELLS:
            continue
        code_words = frozenset(re.findall(r"[A-Za-z]{2,}", "".join(cell["source"])))  # names the code prints
        lines = [line.strip() for line in output_text(cell).splitlines() if english_words(line, code_words)]
        if lines:
            found[cell["id"]] = lines
    return found


def test_the_reader_keeps_data_and_finds_labels():
    assert english_words("ok   第一个响应里有一个 function_call") == ["ok"]
    assert english_words("FAIL 规则仍是规则：function_call.arguments 必须是 JSON 文本") == ["FAIL"]
    assert {"all", "answers", "judged", "Sources"} <= set(english_words("✓ all 24 answers judged right: only Sources: count"))
    assert english_words("第 1 次尝试：{\"ok\": false, \"error\": {\"code\": \"TIMEOUT\"}}") == []
    assert english_words("isError=True: FORBIDDEN: path is outside /workspace") == []
    assert english_words("✗ BadRequestError: Error code: 400 - Invalid schema for function 'x'") == []
    assert english_words("先检查：strict mode（严格模式） · enums（枚举）") == []
    assert english_words("A tool call involves three kinds of object: a rule, a value and a result.") == []
    assert english_words("call_id 'call_A'  成功  trace-0007") == []


@pytest.mark.parametrize("path", TWINS, ids=lambda p: p.stem)
def test_no_english_label_or_sentence_in_the_stored_outputs(path):
    assert leftover(path) == {}, "translate it with lang.say or code_strings.toml, or say here why it stays English"


def test_each_kept_cell_still_shows_english_and_exists():
    for (stem, cell_id), why in KEPT_CELLS.items():
        cells = {c["id"]: c for c in json.loads((ZH / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]}
        assert cell_id in cells, f"{stem} {cell_id} is gone: drop it from KEPT_CELLS"
        code_words = frozenset(re.findall(r"[A-Za-z]{2,}", "".join(cells[cell_id]["source"])))
        assert any(english_words(line, code_words) for line in output_text(cells[cell_id]).splitlines()), (stem, cell_id, why)


# ---- the prose names what the output prints -------------------------------------------------------------

STATUS = re.compile(r"`(ok|OK|FAIL|PASS|成功|失败|通过)`")


@pytest.mark.parametrize("path", TWINS, ids=lambda p: p.stem)
def test_the_chinese_prose_names_only_labels_the_next_outputs_print(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    wrong = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        near = [c for c in cells[max(0, i - 2): i + 3] if c["cell_type"] == "code"]
        printed = "\n".join(output_text(c) for c in near)
        wrong += [f"{cell['id']}: `{label}`" for label in STATUS.findall("".join(cell["source"]))
                  if not re.search(rf"(?<![\w\"']){re.escape(label)}(?![\w\"'])", printed)]  # fmt: skip
    assert wrong == [], "the prose names a label the outputs beside it do not print"
