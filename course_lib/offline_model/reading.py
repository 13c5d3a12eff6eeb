"""Understanding a file-read request: which files, which lines, and which declared tool reads them.

Paths and line ranges ("first 20 lines of /workspace/notes.txt", "last 3 lines of b.txt", "前5行",
"最后三行", "第一行", "a.txt 和 b.txt 的前 3 行", "lines 3 to 5", "line 4", "第 3 到第 5 行", "第四行") come
from the latest user message, in English or Chinese (counts as digits or as the numerals 一 … 二十 and
两; a path is ASCII); the reader is a declared function tool that reads a file's text, with a
property that takes the path. Arguments follow that tool's own schema: a span of lines that does not
start at line 1 is read with `head` up to its last line when the tool has `head` (a reader reads
from the top or the end, never from the middle), else whole; the answer cuts the span out
(`answers`).
"""

from __future__ import annotations

import re
from typing import Any

from course_lib.offline_model.validation import NAMESPACE_SEP, strict_in_effect

_NUMBER_WORDS = dict(zip("one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                         "fifteen sixteen seventeen eighteen nineteen twenty".split(), range(1, 21)))
_NUMBER_WORDS |= dict(zip("一 二 三 四 五 六 七 八 九 十 十一 十二 十三 十四 十五 十六 十七 十八 十九 二十".split(), range(1, 21)))
_NUMBER_WORDS["两"] = 2
_ZH_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
# Chinese numerals 一 … 九十九 ("十二", "二十五", "三十"), then the words, longest first ("twelve" before "two")
_ZH_NUM = "[一二两三四五六七八九]?十[一二三四五六七八九]?|[一二两三四五六七八九]"
_NUM = "(\\d+|" + _ZH_NUM + "|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + ")"
_RANGES = [  # (kind, pattern); the number is group 1, a missing number means 1 ("the first line")
    ("head", re.compile(rf"\b(?:first|top|opening|initial|leading)\s+{_NUM}\b", re.I)),
    ("tail", re.compile(rf"\b(?:last|final|bottom|ending|closing|trailing)\s+{_NUM}\b", re.I)),
    ("head", re.compile(rf"\bhead\s*(?:-n|=|:)?\s*{_NUM}\b", re.I)),
    ("tail", re.compile(rf"\btail\s*(?:-n|=|:)?\s*{_NUM}\b", re.I)),
    ("head", re.compile(r"\b(?:first|top|opening)\s+line\b()", re.I)),
    ("tail", re.compile(r"\b(?:last|final|bottom)\s+line\b()", re.I)),
    ("head", re.compile(rf"(?:最前面|前面|开头|头|前)\s*的?\s*{_NUM}\s*行")),
    ("tail", re.compile(rf"(?:最后|倒数|最末|后面|末尾|结尾|后)\s*的?\s*{_NUM}\s*行")),
    # (the first line, "第一行", is a span of `_SPANS` from line 1: a head count)
]
# Spans of lines, checked before the counts above: (first, last) are groups 1 and 2 (one line: group 1 only).
# A span from line 1 is a head count ("第 1 到第 5 行" is "前 5 行"); a line before 1 is no line at all.
_TO = r"\s*(?:to|through|thru|until|till|-|–|—|~)\s*"
_SPANS = [
    re.compile(rf"第\s*{_NUM}\s*行?\s*(?:到|至|-|–|—|~|～)\s*第?\s*{_NUM}\s*行"),  # 第 3 到第 5 行, 第3-5行
    re.compile(rf"\blines?\s+{_NUM}{_TO}(?:line\s+)?{_NUM}\b", re.I),  # lines 3 to 5, line 3 to line 5
    re.compile(rf"\bbetween\s+lines?\s+{_NUM}\s+and\s+(?:line\s+)?{_NUM}\b", re.I),
    re.compile(rf"第\s*{_NUM}\s*行"),  # 第四行, 第 4 行
    re.compile(rf"\bline\s+(?:no\.?\s*|number\s+|#\s*)?{_NUM}\b", re.I),  # line 4
]
# "a.txt 和 b.txt 的前 3 行": a range after paths joined by 和/、 is for each of them
_ZH_JOINED = re.compile(r"\s*(?:和|与|跟|及|以及|、)\s*")
# "show me 10 lines of a.txt" reads from the top; "it has 30 lines" is not a request
_BARE_COUNT = re.compile(
    rf"\b(?:show|read|print|display|give|see|view|need|want)\s+(?:me\s+)?(?:just\s+|only\s+)?{_NUM}\s+lines?\b", re.I
)
# "显示 a.txt 的 10 行", "只要 3 行" (the path is blanked out by then, so [\s的]* spans it); "它有 30 行" is not one
_BARE_COUNT_ZH = re.compile(rf"(?:显示|读取|读|查看|看看|看|打印|只要|只看|只读|给我)[\s的]*{_NUM}\s*行")
_CLAUSE_BREAK = re.compile(r"[;,\n。，；！？!?]|\.(?=\s|$)|\s(?:and|then|plus|also)\s|和|以及|然后|再", re.I)
_PATH_RUN = re.compile(r"[A-Za-z0-9_./~-]+")  # ASCII only, so "读取notes.txt前20行" still splits
_FILE_NAME = re.compile(r"[A-Za-z0-9_.~-]*[A-Za-z0-9_~-]\.[A-Za-z][A-Za-z0-9]{0,7}")
_FILE_INTENT = re.compile(
    r"\b(?:read|show|open|display|print|cat|view|contents?|lines?|files?)\b|读|查看|看看|显示|打开|文件|内容|全文|行", re.I
)


def _number(token: str) -> int:
    """"20" → 20, "five" → 5, "十二" → 12, "三十五" → 35, "" → 1 ("the first line")."""
    if token.isdigit():
        return int(token)
    if token in _NUMBER_WORDS or token.lower() in _NUMBER_WORDS:
        return _NUMBER_WORDS[token.lower()]
    tens, ten, ones = token.partition("十")
    if ten:
        return _ZH_DIGITS.get(tens, 1) * 10 + _ZH_DIGITS.get(ones, 0)
    return _ZH_DIGITS.get(token, 1)


def _find_paths(text: str) -> list[tuple[int, int, str]]:
    """Spans and text of path-like tokens: rooted (`/a/b`, `./a`, `~/a`) or with a file extension."""
    found = []
    for match in _PATH_RUN.finditer(text):
        token = match.group().rstrip(".-")  # a full stop after a path is punctuation, not the path
        if match.start() > 0 and text[match.start() - 1] == ":" or token.startswith("//"):
            continue  # the rest of a URL (https://...)
        rooted = token.startswith(("/", "./", "../", "~/")) and re.search(r"[A-Za-z0-9]", token)
        named = _FILE_NAME.fullmatch(token.rsplit("/", 1)[-1]) and token.lower() not in ("e.g", "i.e", "etc")
        if rooted or named:
            found.append((match.start(), match.start() + len(token), token))
    return found


def _find_ranges(masked: str) -> list[tuple[int, int, str, int | tuple[int, int]]]:
    """Line ranges (start, end, kind, n) in text whose paths are blanked out: ("head"/"tail", count),
    or ("lines", (first, last)) for a span of lines that starts after line 1 (`_SPANS`)."""
    ranges, taken = [], set()
    for pattern in _SPANS:
        for m in pattern.finditer(masked):
            first, last = sorted((_number(m.group(1)), _number(m.group(m.lastindex or 1))))
            if first >= 1 and not taken & set(range(*m.span())):
                ranges.append((m.start(), m.end(), *(("head", last) if first == 1 else ("lines", (first, last)))))
                taken |= set(range(*m.span()))
    for kind, pattern in _RANGES:
        for m in pattern.finditer(masked):
            if not taken & set(range(*m.span())):
                ranges.append((m.start(), m.end(), kind, _number(m.group(1))))
                taken |= set(range(*m.span()))
    for m in [*_BARE_COUNT.finditer(masked), *_BARE_COUNT_ZH.finditer(masked)]:
        if not taken & set(range(*m.span())):
            ranges.append((m.start(), m.end(), "head", _number(m.group(1))))
    return sorted(ranges)


def _clause(text: str, position: int) -> int:
    """The index of the clause (split at commas, "and", full stops, 和 …) that holds `position`."""
    return sum(1 for m in _CLAUSE_BREAK.finditer(text) if m.end() <= position)


def _gap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Characters between two spans of text (0 when they touch or overlap)."""
    return max(a[0] - b[1], b[0] - a[1], 0)


def _extract_reads(text: str) -> list[tuple[str, str | None, int | tuple[int, int] | None]]:
    """The reads a request asks for, in order: (path, "head"/"tail", line count), (path, "lines",
    (first, last)) for a span of lines after the first, or (path, None, None) for the whole file.

    A range belongs to the closest path in its own clause; a range in a clause without a path
    ("Read a.txt. Only the first 5 lines.") applies to every path that has no range of its own,
    else to the closest path. A path with no range is read whole.
    """
    paths = _find_paths(text)
    if not paths:
        return []
    masked = text
    for start, end, _ in paths:  # so that a number inside a path is never a line count
        masked = masked[:start] + " " * (end - start) + masked[end:]
    ranges: dict[str, list] = {path: [] for _, _, path in paths}
    loose = []
    for start, end, kind, n in _find_ranges(masked):
        here = [p for p in paths if _clause(masked, p[0]) == _clause(masked, start)]
        if here:
            nearest = min(here, key=lambda p: _gap(p[:2], (start, end)))
            ranges[nearest[2]].append((start, kind, n))
        else:
            loose.append((start, end, kind, n))
    for start, end, kind, n in loose:
        targets = [path for path, found in ranges.items() if not found]
        for path in targets or [min(paths, key=lambda p: _gap(p[:2], (start, end)))[2]]:
            ranges[path].append((start, kind, n))
    for (_, end, first), (start, _, second) in reversed(list(zip(paths, paths[1:]))):
        if not ranges[first] and _ZH_JOINED.fullmatch(text[end:start]) and ranges[second] and first != second:
            ranges[first] = [read for read in ranges[second] if read[0] > start] or ranges[first]
    reads = []
    for path, found in ranges.items():
        for read in [(path, kind, n) for _, kind, n in sorted(found)] or [(path, None, None)]:
            if read not in reads:
                reads.append(read)
    return reads


def _properties(tool: dict) -> dict:
    return (tool.get("parameters") or {}).get("properties") or {}


def _types(schema: Any) -> list:
    """The JSON types a property allows; strict schemas write "string or null" as a list or anyOf."""
    if not isinstance(schema, dict):
        return []
    declared = schema.get("type")
    return (declared if isinstance(declared, list) else [declared]) + [
        kind for branch in schema.get("anyOf") or [] for kind in _types(branch)
    ]


def _path_property(tool: dict) -> str | None:
    """The string property that takes the file path: named like a path, else described as one."""
    strings = {name: schema for name, schema in _properties(tool).items() if "string" in _types(schema)}
    for name in strings:
        if name.lower() in ("path", "file_path", "filepath", "filename", "file", "note_path"):
            return name
    for name, schema in strings.items():
        if re.search(r"path|file", str(schema.get("description", "")), re.I):
            return name
    return None


def _is_reader(tool: dict) -> bool:
    """A tool whose name (`read_text_file`, `fs__read_text_file`, `read_note`) or description
    says it reads a file or text."""
    words = set(re.split(r"[^a-z]+", tool["name"].lower()))
    if words & {"media", "image", "info", "metadata", "multiple"}:  # about a file, but not its text
        return False
    verb = words & {"read", "view", "open", "cat", "show", "load"} or {"get"} <= words and words & {"text", "contents"}
    by_name = verb and words & {"file", "files", "text", "note", "notes", "doc", "document", "contents", "content"}
    description = str(tool.get("description", ""))
    by_description = re.search(r"\bread(s|ing)?\b[^.]*\b(files?|text|notes?|documents?)\b", description, re.I)
    return bool(by_name or by_description)


def _mentions(text: str, word: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", text, re.I) is not None


# How hosts put a server's name into a tool's name (checked in their sources): the course's
# `<prefix>__<name>` (`declarations.alias_for`), the OpenAI Agents SDK's `include_server_in_tool_names`
# `mcp_<server>__<name>` (agents/mcp/util.py `_build_prefixed_tool_base_name`; the server's name with
# every character but letters, digits, _ and - made _), pydantic-ai's `.prefixed(p)` `<p>_<name>`
# (pydantic_ai/toolsets/prefixed.py), and the Responses `namespace` tool (`<namespace>.<name>` here).
_AGENTS_SDK = re.compile(r"mcp_(.+?)__(.+)")


def base_name(name: str) -> str:
    """A tool's name without the server part a host put in front (`mcp_ref__read_text_file`,
    `ref__read_text_file`, `ref.read_text_file` → `read_text_file`; pydantic-ai's `ref_read_text_file`
    cannot be told apart from a name with an underscore, so it stays as it is)."""
    name = name.rpartition(NAMESPACE_SEP)[2]
    found = _AGENTS_SDK.fullmatch(name)
    return found.group(2) if found else name.rpartition("__")[2]


def server_of(tool: dict, others: list[dict]) -> str | None:
    """The server part of a tool's name, in any host's convention (see above); `others`: the tools
    that may share its base name (pydantic-ai's `<prefix>_<name>` is found by the name they share)."""
    name = tool["name"]
    if tool.get("namespace"):
        return tool["namespace"]
    if (found := _AGENTS_SDK.fullmatch(name)) is not None:
        return found.group(1)
    if "__" in name:
        return name.partition("__")[0]
    for other in others:  # "ref_read_text_file" beside "read_text_file" or "files_read_text_file"
        shared = _shared_suffix(name, other["name"])  # (the shared part must read: "read_file" and
        if other is not tool and name != shared and _is_reader({"name": shared}):  # "read_text_file" share only "file")
            return name[: -len(shared)].rstrip("_") or None
    return None


def _shared_suffix(a: str, b: str) -> str:
    """The longest run of whole `_`-separated words both names end with ("read_text_file")."""
    words_a, words_b = a.split("_"), b.split("_")
    n = 0
    while n < min(len(words_a), len(words_b)) and words_a[-1 - n] == words_b[-1 - n]:
        n += 1
    return "_".join(words_a[len(words_a) - n :]) if n else ""


def _names_server(text: str, server: str) -> bool:
    """Whether the request names the server ("with the ref server", "用 ref 服务器", "the ref-fs server"
    for `ref_fs`)."""
    words = [word for word in re.split(r"[_\-\s]+", server) if word]
    if not words:
        return False
    joined = r"[\s_\-]*".join(re.escape(word) for word in words)
    return re.search(rf"(?<![A-Za-z0-9_]){joined}(?![A-Za-z0-9_])", text, re.I) is not None


def _find_reader_tool(tools: list[dict], text: str) -> dict | None:
    """The file-reading tool to use: one named in the request ("using ref__read_text_file"),
    else one whose server is named ("with the ref server", in any host's naming: `server_of`),
    else the first declared."""
    readers = [tool for tool in tools if _is_reader(tool) and _path_property(tool)]

    def score(tool: dict) -> int:
        if _mentions(text, tool["name"]):
            return 2
        server = server_of(tool, readers)
        return 1 if server and _names_server(text, server) else 0

    return max(readers, key=score, default=None)  # max keeps the first of equals: declaration order


def _arguments(tool: dict, read: tuple[str, str | None, int | tuple[int, int] | None]) -> dict[str, Any]:
    """Arguments for one read, in schema property order; head/tail only if the schema has them.
    A span of lines ("lines", (first, last)) is read with `head` = last when the tool has `head`
    (it reads from the top: enough lines to hold the span), else whole; the answer cuts the span out.
    A tool in strict mode gets every property, with null for the ones not used (strict has no
    "absent"). Strict mode is the mode in effect: an omitted `strict` on a strict-compatible schema
    is strict in the Responses API (`validation.strict_in_effect`). A property the rule makes required
    and nullable while marking it optional (`x-optional`, as Mastra's rule does) gets null too, as a
    real model fills it."""
    path, kind, n = read
    values = {_path_property(tool): path}
    if kind == "lines" and isinstance(n, tuple) and "head" in _properties(tool):
        values["head"] = n[1]
    elif kind in ("head", "tail") and kind in _properties(tool):
        values[kind] = n
    strict = strict_in_effect(tool)
    parameters = tool.get("parameters") or {}
    filled = set(parameters.get("required") or []) & set(parameters.get("x-optional") or [])
    return {name: values.get(name) for name, schema in _properties(tool).items()
            if name in values or strict or (name in filled and "null" in _types(schema))}


_EMPTY = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}


def _empty_arguments(tool: dict) -> dict[str, Any]:
    """What a call must carry when `tool_choice` forces it but the request gives nothing to fill it:
    every required property (every property, for a tool in strict mode, an omitted `strict` on a
    strict-compatible schema included) with null if its schema allows null, else the empty value of
    its type ("", 0, false, [], {}). Empty, never guessed: the tool's own checks refuse what needs a
    real value."""
    required = (tool.get("parameters") or {}).get("required") or []
    strict = strict_in_effect(tool)
    values = {}
    for name, schema in _properties(tool).items():
        if strict or name in required:
            kinds = _types(schema)
            values[name] = None if "null" in kinds else next((_EMPTY[k] for k in kinds if k in _EMPTY), None)
    return values


# A framework's automated feedback in a user message is not a new task: pydantic-ai's retry
# ("Your previous response failed the application's validation (this is automated feedback, not a
# message from the user):" and a <pyai:validation_errors> or <pyai:retry_feedback> fence; before 2.x,
# "Validation feedback: … Fix the errors and try again."). The task stays the request before it.
_FEEDBACK = re.compile(r"\(this is automated feedback, not a message from the user\)|<pyai:[a-z_]+>"
                       r"|\AValidation feedback:|Fix the errors and try again\.\s*\Z")


def is_feedback(text: str) -> bool:
    """Whether a user message is a framework's automated feedback rather than the user's request."""
    return _FEEDBACK.search(text) is not None


def _asks(item: dict) -> bool:
    return item.get("role") == "user" and not is_feedback(item.get("text", ""))


def _latest_user_text(items: list[dict]) -> str:
    """The latest request the user made (a framework's feedback is not one)."""
    return next((item["text"] for item in reversed(items) if _asks(item)), "")


def _last_turn(items: list[dict]) -> list[dict]:
    """Everything after the user's last request: the model's calls, their results and any
    framework feedback so far."""
    users = [i for i, item in enumerate(items) if _asks(item)]
    return items[users[-1] + 1 :] if users else items
