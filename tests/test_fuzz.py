"""Property-based fuzzing of the arguments parser and the files server (hypothesis, bounded).

Two families of properties:
- arguments: arbitrary and JSON-ish text (duplicate keys, NaN, trailing junk, deep nesting) through
  `parse_read_args`, and arbitrary argument objects through the server's tools/call path. Only
  ArgumentsError / tool errors come out, and the outcome agrees with an independent oracle: it
  succeeds exactly when the input is a valid object by the rule.
- paths: text from path-ish alphabets against a root with files inside, a secret outside, and
  symbolic links in and out. Never an uncaught exception, never the outside marker, never the
  real root path in a message, and whatever is read is a file that really is inside the root.

The profile is derandomized (the same examples every run, no example database written) and small,
so the whole file runs in a few seconds.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp import Client

from course_lib.arguments import (
    MAX_ARGUMENTS_CHARS,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    ArgumentsError,
    ReadTextFileArgs,
    parse_read_args,
)
from course_lib.fs_server import ToolFailure, Workspace, build_server

settings.register_profile(
    "course-fuzz",
    max_examples=150,
    deadline=None,
    derandomize=True,  # deterministic in CI: the examples come from a fixed seed
    database=None,  # and nothing is written to .hypothesis/
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
FUZZ = settings.get_profile("course-fuzz")

MARKER = "FUZZ-OUTSIDE-MARKER-93c1d7"
TOOL = "read_text_file"


# --- the independent oracle for arguments ---------------------------------------------------


class _Invalid(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise _Invalid("duplicate key")
    return dict(pairs)


def _refuse_constant(token: str) -> Any:
    raise _Invalid(token)


def _plain_json(value: Any, depth: int = 0) -> bool:
    """Finite numbers, integers of at most MAX_INT_DIGITS digits, nesting of at most MAX_DEPTH."""
    if isinstance(value, (dict, list)):
        children = value.values() if isinstance(value, dict) else value
        return depth < MAX_DEPTH and all(_plain_json(child, depth + 1) for child in children)
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return len(str(abs(value))) <= MAX_INT_DIGITS
    return True


def rule_accepts(obj: Any) -> bool:
    """read_text_file's rule, written out by hand: a str path, at most one integer head/tail ≥ 1."""
    if not isinstance(obj, dict) or not set(obj) <= {"path", "head", "tail"} or type(obj.get("path")) is not str:
        return False
    counts = [obj.get(name) for name in ("head", "tail")]
    if not all(count is None or (type(count) is int and count >= 1) for count in counts):
        return False
    return None in counts


def text_accepted(text: Any) -> bool:
    """Whether arguments text should parse and validate, decided without course_lib."""
    if not isinstance(text, str) or len(text) > MAX_ARGUMENTS_CHARS:
        return False
    try:
        # json.loads itself refuses data after the value; the hooks refuse duplicates and NaN.
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant)
    except (ValueError, _Invalid, RecursionError):
        return False
    return _plain_json(value) and rule_accepts(value)


# --- strategies for arguments ----------------------------------------------------------------

KEYS = st.sampled_from(["path", "head", "tail", "lines", "Path", "head "]) | st.text(max_size=6)
SCALARS = (
    st.none() | st.booleans() | st.integers(-3, 30) | st.integers(-(10**120), 10**120)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12)
    | st.sampled_from(["notes.txt", "/workspace/notes.txt", "../outside/secret.txt", "5"])
)
JSON_VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3), max_leaves=10
)
PATH_VALUES = st.sampled_from(["notes.txt", "/workspace/docs/guide.md", "missing.txt", "/etc/passwd", "docs"])
COUNTS = st.none() | st.integers(-2, 50)
VALID_LOOKING = st.fixed_dictionaries({"path": PATH_VALUES}, optional={"head": COUNTS}) | st.fixed_dictionaries(
    {"path": PATH_VALUES}, optional={"tail": COUNTS}
)
ARGUMENT_OBJECTS = st.one_of(
    VALID_LOOKING,
    st.fixed_dictionaries(
        {},
        optional={
            "path": PATH_VALUES | JSON_VALUES,
            "head": COUNTS | JSON_VALUES,
            "tail": COUNTS | JSON_VALUES,
            "lines": JSON_VALUES,
        },
    ),
    st.dictionaries(KEYS, JSON_VALUES, max_size=4),
)
JUNK = st.sampled_from(["", " ", "\n\t", "}", "]", ",", " {}", "x", "\x00", "//c", '"', "\u00a0", "\ufeff"])


@st.composite
def json_texts(draw: st.DrawFn) -> str:
    """JSON-ish text: a value serialized with the odd duplicate key, NaN/Infinity, junk around it."""

    def dump(value: Any) -> str:
        if isinstance(value, dict):
            items = list(value.items())
            if items and draw(st.integers(0, 4)) == 4:
                items.append(draw(st.sampled_from(items)))  # a duplicate key, as a sloppy model writes
            return "{" + ", ".join(f"{json.dumps(key)}: {dump(item)}" for key, item in items) + "}"
        if isinstance(value, list):
            return "[" + ", ".join(dump(item) for item in value) + "]"
        return json.dumps(value)  # NaN and Infinity come out as the non-standard tokens

    text = dump(draw(st.one_of(VALID_LOOKING, VALID_LOOKING, ARGUMENT_OBJECTS, JSON_VALUES)))
    change = draw(st.integers(0, 9))  # most texts are left well-formed, so success is reached too
    if change == 9:  # deep nesting around it
        depth = draw(st.integers(MAX_DEPTH - 2, MAX_DEPTH + 2))
        text = '{"a": ' * depth + text + "}" * depth
    elif change == 8:  # cut it somewhere
        text = text[: draw(st.integers(0, len(text)))]
    elif change in (6, 7):  # whitespace or junk around it
        text = draw(JUNK) + text + draw(JUNK)
    return text


ARGUMENT_TEXTS = json_texts() | json_texts() | st.text(max_size=60) | st.text(alphabet='{}[]",:0123456789.eE-+ truefalsn\\u', max_size=60)


@FUZZ
@given(ARGUMENT_TEXTS)
def test_parse_read_args_agrees_with_the_oracle(text):
    try:
        args = parse_read_args(text)
    except ArgumentsError as refusal:
        assert refusal.code == "INVALID_INPUT"
        assert isinstance(refusal.message, str) and refusal.message
        assert not text_accepted(text), "refused a valid arguments text"
        event("refused")
    else:
        event("accepted")
        assert text_accepted(text), "accepted an invalid arguments text"
        obj = json.loads(text)
        assert (args.path, args.head, args.tail) == (obj["path"], obj.get("head"), obj.get("tail"))


@FUZZ
@given(JSON_VALUES | ARGUMENT_OBJECTS | st.binary(max_size=20))
def test_parse_read_args_refuses_anything_but_text(value):
    if isinstance(value, str):
        return
    with pytest.raises(ArgumentsError):
        parse_read_args(value)


# --- the world the paths are fuzzed against --------------------------------------------------


@dataclass
class World:
    base: Path  # real parent of the root
    root: Path
    ws: Workspace
    inside: frozenset[str]  # the text of every regular file inside the root


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    base = tmp_path_factory.mktemp("fuzz").resolve()
    root = base / "root"
    (root / "docs").mkdir(parents=True)
    (root / "notes.txt").write_text("inside notes\nsecond line\n")
    (root / "docs" / "guide.md").write_text("# guide\n")
    (root / "%2e%2e").write_text("literal percent name\n")
    (root / "．．").mkdir()
    (root / "．．" / "secret.txt").write_text("fullwidth inside\n")
    for name in ("outside", "root_evil", "rootevil"):
        (base / name).mkdir()
        (base / name / "secret.txt").write_text(f"{MARKER} {name}\n")
        (base / name / "notes.txt").write_text(f"{MARKER} notes {name}\n")
    links = {
        "in_link": "notes.txt", "docs/up": "..", "abs_in": str(root / "docs" / "guide.md"),
        "out_link": "../outside/secret.txt", "out_dir": str(base / "outside"), "evil_dir": "../root_evil",
        "dangling_out": "../outside/nope", "dangling_in": "nope.txt", "loop": "loop", "hop": "docs/up/out_link",
    }
    for link, target in links.items():
        (root / link).symlink_to(target)
    os.mkfifo(root / "pipe")
    inside = frozenset(
        path.read_text() for path in root.rglob("*") if path.is_file() and not path.is_symlink()
    )
    return World(base, root, Workspace(root), inside)


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[tuple[BlockingPortal, Client]]:
    """One in-process client for all examples, driven from sync hypothesis tests through a portal."""
    with start_blocking_portal(backend="asyncio") as portal:
        with portal.wrap_async_context_manager(Client(build_server(world.ws))) as client:
            portal.call(client.list_tools)
            yield portal, client


def assert_no_leak(world: World, text: str) -> None:
    assert MARKER not in text
    assert str(world.root) not in text and str(world.base) not in text


# --- strategies for paths --------------------------------------------------------------------

NAMES = [
    "notes.txt", "docs", "guide.md", "secret.txt", "outside", "root_evil", "rootevil", "root", "in_link",
    "up", "abs_in", "out_link", "out_dir", "evil_dir", "dangling_out", "dangling_in", "loop", "hop", "pipe",
    "%2e%2e", "．．", "workspace", "workspace_evil", "etc", "passwd", "~", "~root", "C:", ".", "..", "", " ",
    "x\ud800", "\udc80",  # lone surrogates (hypothesis's text() never makes them)
]
ALPHABET = "./\\%~:aeE2fA .．／＼\u2215é€" + "\u202e\u200b\ufeff\n\t\x00\x7f\x85"
COMPONENTS = st.sampled_from(NAMES) | st.text(alphabet=ALPHABET, max_size=4)
PREFIXES = ["", "", "/", "/workspace/", "/workspace", "//", "./", "../", "~/", "C:\\", "\\\\server\\share\\"]


# Paths that matter in the fuzz world: readable files, links in and out, dangling, looping.
TARGETS = [
    "notes.txt", "docs/guide.md", "in_link", "abs_in", "docs/up/notes.txt", "%2e%2e", "．．/secret.txt",
    "out_link", "out_dir/secret.txt", "evil_dir/secret.txt", "hop", "docs/up/out_link", "docs/up/up/outside/secret.txt",
    "dangling_out", "dangling_in", "loop", "pipe", "docs", "../outside/secret.txt", "../root_evil/secret.txt",
]


PLAUSIBLE_PATHS = st.builds(
    lambda prefix, target, suffix: prefix + target + suffix,
    st.sampled_from(["", "/workspace/", "./", "docs/../", "docs/up/", "/workspace//./", "x/../", "docs/up/docs/../"]),
    st.sampled_from(TARGETS),
    st.sampled_from(["", "", "", "/", "/.", " "]),
)


@st.composite
def chaotic_paths(draw: st.DrawFn, world: World) -> str:
    prefix = draw(st.sampled_from([*PREFIXES, f"{world.root}/", f"{world.base}/", f"{world.root}_evil/"]))
    separator = draw(st.sampled_from(["/", "/", "//", "/./", "\\", "／"]))
    path = prefix + separator.join(draw(st.lists(COMPONENTS, min_size=1, max_size=6)))
    return path + draw(st.sampled_from(["", "", "/", " ", "\n", "/.", "\x00"]))


def fuzz_paths(world: World) -> st.SearchStrategy[str]:
    return PLAUSIBLE_PATHS | chaotic_paths(world)


def check_read(world: World, path: str, options: dict[str, int]) -> None:
    try:
        shown, text = world.ws.read(ReadTextFileArgs(path=path, **options))
    except ToolFailure as failure:
        assert failure.code in ("INVALID_INPUT", "FORBIDDEN", "NOT_FOUND"), failure
        assert_no_leak(world, failure.message)
        event(failure.code)
        return
    event("read")
    assert shown == "/workspace" or shown.startswith("/workspace/")
    assert MARKER not in text
    # What came back is (part of) a file that really lives inside the root.
    assert any(text in content for content in world.inside), text


READ_OPTIONS = st.sampled_from([{}, {}, {"head": 1}, {"tail": 1}, {"head": 5}, {"tail": 3}])


@settings(FUZZ, max_examples=100)
@given(PLAUSIBLE_PATHS, READ_OPTIONS)
def test_plausible_paths_never_escape(world, path, options):
    check_read(world, path, options)


@FUZZ
@given(data=st.data())
def test_chaotic_paths_never_escape(world, data):
    check_read(world, data.draw(chaotic_paths(world)), data.draw(READ_OPTIONS))


@settings(FUZZ, max_examples=100)
@given(st.text(max_size=40))
def test_arbitrary_text_paths_never_escape(world, path):
    check_read(world, path, {})


# --- the tools/call path ---------------------------------------------------------------------


def call(server: tuple[BlockingPortal, Client], arguments: dict[str, Any]):
    portal, client = server
    return portal.call(client.call_tool, TOOL, arguments)


@settings(FUZZ, max_examples=120)
@given(ARGUMENT_OBJECTS)
def test_tools_call_with_fuzzed_arguments(world, server, arguments):
    reads = world.ws.reads
    result = call(server, arguments)
    code = result.content[0].text.partition(": ")[0] if result.is_error else None  # an error is "CODE: message"
    event(code or "read")
    if result.is_error:
        assert code in ("INVALID_INPUT", "FORBIDDEN", "NOT_FOUND"), result.content  # UPSTREAM_ERROR = a crash
        assert result.structured_content is None  # the output schema describes successes only
        assert_no_leak(world, result.content[0].text)
        if not rule_accepts(arguments):
            assert code == "INVALID_INPUT"
            assert world.ws.reads == reads  # refused before any file was touched
    else:
        assert rule_accepts(arguments), "the server accepted arguments its rule refuses"
        assert MARKER not in result.content[0].text
        assert result.structured_content["text"] == result.content[0].text


@settings(FUZZ, max_examples=80)
@given(data=st.data())
def test_tools_call_with_fuzzed_paths(world, server, data):
    path = data.draw(fuzz_paths(world))
    result = call(server, {"path": path, **data.draw(READ_OPTIONS)})
    text = result.content[0].text
    event(text.partition(": ")[0] if result.is_error else "read")
    assert_no_leak(world, text)
    if result.is_error:
        assert text.partition(": ")[0] in ("INVALID_INPUT", "FORBIDDEN", "NOT_FOUND"), text
    else:
        assert any(text in content for content in world.inside), text
