"""Checks for notebook 06 (approval and side effects).

- `check_make_action_id(fn)`: the learner's `make_action_id(tool, arguments, user_id) -> str`
  is run on a battery of pairs of actions. Whether a pair must share an id is decided by the
  library's own `approval.action_id`: same id exactly when it is the same tool, the same
  arguments (in any key order) and the same user.
- `check_write_decisions(answer)`: for six described attempts, will the write run? Each attempt
  is then played for real — a fresh copy of the workspace, a `NotesStore`, an `AuditedExecutor`
  and an approval of action A — and the learner's answer is compared with what happened.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from anyio.from_thread import start_blocking_portal

from course_lib.approval import action_id
from course_lib.exercises import Solutions, failed, not_answered, passed

# ---- exercise 1: make_action_id ----------------------------------------------------------------

NOTE = {"path": "/workspace/todo.md", "content": "- [x] Try head 5\n", "expected_version": 1}
Action = tuple[str, dict[str, Any], str]

PAIRS: list[tuple[str, Action, Action]] = [
    ("the same action, asked twice",
     ("apply_note_update", NOTE, "alice"), ("apply_note_update", dict(NOTE), "alice")),
    ("the same arguments with their keys in another order",
     ("apply_note_update", NOTE, "alice"), ("apply_note_update", dict(reversed(list(NOTE.items()))), "alice")),
    ("nested objects with their keys in another order",
     ("tag_note", {"path": "/workspace/todo.md", "tags": {"topic": "mcp", "level": 2}}, "alice"),
     ("tag_note", {"tags": {"level": 2, "topic": "mcp"}, "path": "/workspace/todo.md"}, "alice")),
    ("another content", ("apply_note_update", NOTE, "alice"),
     ("apply_note_update", {**NOTE, "content": "- [x] Try head 5 and delete everything else\n"}, "alice")),
    ("another path", ("apply_note_update", NOTE, "alice"),
     ("apply_note_update", {**NOTE, "path": "/workspace/notes.txt"}, "alice")),
    ("another tool", ("apply_note_update", NOTE, "alice"), ("delete_note", NOTE, "alice")),
    ("another user", ("apply_note_update", NOTE, "alice"), ("apply_note_update", NOTE, "bob")),
    ("expected_version 1 (an integer) versus \"1\" (a string)", ("apply_note_update", NOTE, "alice"),
     ("apply_note_update", {**NOTE, "expected_version": "1"}, "alice")),
    ("content with and without its final newline", ("apply_note_update", NOTE, "alice"),
     ("apply_note_update", {**NOTE, "content": NOTE["content"].rstrip("\n")}, "alice")),
    ("user and tool names run together (\"apply_note_update\" + \"alice\" vs \"apply_note_updatea\" + \"lice\")",
     ("apply_note_update", NOTE, "alice"), ("apply_note_updatea", NOTE, "lice")),
]  # fmt: skip
"""(what differs, action 1, action 2); whether the ids must be equal comes from `action_id`."""


def _fresh(action: Action) -> Action:
    """A deep copy, so the learner's function may change what it gets without spoiling the battery."""
    tool, arguments, user = action
    return tool, json.loads(json.dumps(arguments)), user


def check_make_action_id(fn: Callable[[str, dict[str, Any], str], str]) -> bool:
    """Run `fn` on every pair of `PAIRS`; name the first pair it gets wrong and the likely mistake."""
    if not_answered(fn):
        return failed("Not answered yet: define make_action_id(tool, arguments, user_id) and pass the function itself.")
    if not callable(fn):
        return failed(f"Pass the function itself (make_action_id, without parentheses); you passed {fn!r}.")
    for number, (what, first, second) in enumerate(PAIRS, start=1):
        try:
            ids = fn(*_fresh(first)), fn(*_fresh(second))
        except Exception as error:
            return failed(f"make_action_id raised {type(error).__name__}: {error} on pair {number} ({what}).")
        if any(value is ... for value in ids):
            return failed("Not answered yet: make_action_id still returns ...; return one string per action.")
        wrong = next((value for value in ids if not isinstance(value, str) or not value), None)
        if wrong is not None:
            return failed(f"make_action_id must return a non-empty str; it returned {_cut(repr(wrong))} "
                          f"({type(wrong).__name__}) on pair {number}. {_type_hint(wrong)}")
        same = action_id(*first) == action_id(*second)
        if same and ids[0] != ids[1]:
            return failed(f"pair {number} ({what}) is ONE action and must get the same id; yours gave "
                          f"{_cut(ids[0])} and {_cut(ids[1])}. Hint: {_hint(number, fn)}")
        if not same and ids[0] == ids[1]:
            return failed(f"pair {number} ({what}) are TWO different actions but get the same id {_cut(ids[0])}: "
                          f"approving one would authorize the other. Hint: {_hint(number, fn)}")
    message = f"all {len(PAIRS)} pairs right: key order is ignored; tool, every argument and the user are bound."
    if _joined_without_separator(fn):
        message += (" One caution: your id joins the parts with nothing between them. It holds here only by luck —"
                    " a JSON object ends at its own closing brace, and MCP's naming rule for tools allows only letters,"
                    " digits, '_', '-' and '.' — yet 'x{}' + '{}' + 'y' and 'x' + '{}' + '{}y' give the same id. Make it safe by construction: hash one JSON list [tool, arguments,"
                    " user], or put a separator no part can contain.")
    return passed(message)


def _cut(value: str, limit: int = 30) -> str:
    return repr(value if len(value) <= limit else value[: limit - 1] + "…")


def _type_hint(value: Any) -> str:
    """What the learner most likely returned instead of text."""
    if hasattr(value, "hexdigest"):
        return "That is the hash object itself: return its .hexdigest() (text)."
    if isinstance(value, bytes):
        return "That is .digest() (bytes): return .hexdigest(), which is text."
    if isinstance(value, int):
        return ("Python's hash() returns an int, and for text it changes from one run of Python to the next "
                "(hash randomisation): an approval stored before a restart would never match. Use "
                "hashlib.sha256(text.encode()).hexdigest().")
    return "An id is stored and compared as text."


def _probe_equal(fn: Callable[..., Any], a: Action, b: Action) -> bool:
    try:
        return fn(*_fresh(a)) == fn(*_fresh(b))
    except Exception:
        return False


def _joined_without_separator(fn: Callable[..., Any]) -> bool:
    """True if the parts are simply concatenated: 'x{}' + '{}' + 'y' == 'x' + '{}' + '{}y'."""
    return _probe_equal(fn, ("x{}", {}, "y"), ("x", {}, "{}y"))


def _hint(number: int, fn: Callable[..., Any]) -> str:
    if number == 3 and _probe_equal(fn, ("t", {"a": {"x": 1}}, "u"), ("t", {"a": "{'x': 1}"}, "u")):
        # A nested dict and its str() get the same id: the values were turned into text with str().
        return ("you turn values into text with str() (or an f-string): str() of a nested dict keeps its "
                "insertion order, and {'x': 1} becomes the same as the string \"{'x': 1}\". Serialize the whole "
                "arguments with json.dumps(arguments, sort_keys=True): it sorts every level and keeps the types.")
    if number in (4, 5) and _probe_equal(fn, ("t", {"a": 1}, "u"), ("t", {"a": 2}, "u")):
        return "the id ignores the values: sorted(arguments) and arguments.keys() give only the keys; hash the values too."
    hints = {
        1: "the id must depend only on its inputs (no time, no counter, no uuid, no random part).",
        2: "the id follows the keys' insertion order: str(dict) and json.dumps without sort_keys=True both keep "
           "it. Use json.dumps(arguments, sort_keys=True).",
        3: "sort keys at every level, not only the top one: sorted(arguments.items()) sorts one level; "
           "json.dumps(arguments, sort_keys=True) sorts all of them.",
        6: "include the tool name.",
        7: "include the user id: approving for alice must not authorize bob.",
        8: "keep JSON types: str(value) or an f-string makes 1 and \"1\" look alike; json.dumps keeps them apart.",
        9: "keep the exact text: do not strip or normalise the values.",
        10: "you joined the names with nothing between them: 'apply_note_update' + 'alice' and "
            "'apply_note_updatea' + 'lice' are the same text. Hash one JSON list [tool, arguments, user], or put a "
            "separator no name can contain between the parts.",
    }
    return hints.get(number, "bind every argument value exactly as given.")


def _make_action_id_solution(tool: str, arguments: dict[str, Any], user_id: str) -> str:
    # One JSON list keeps the three parts apart; sort_keys sorts every level of the arguments.
    text = json.dumps([tool, arguments, user_id], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "act_" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# ---- exercise 2: will the write run? ---------------------------------------------------------

A_ARGS = {"path": "/workspace/todo.md", "content": "# To do\n\n- [x] Try head 5 and list which objects change\n",
          "expected_version": 1}  # fmt: skip
"""Action A: alice replaces /workspace/todo.md; a person approved exactly this (approvals live 5 minutes)."""

ATTEMPTS: dict[str, str] = {
    "a": "alice sends A again, with its keys in another order",
    "b": "bob sends exactly A's tool and arguments",
    "c": "alice's first try of A timed out before anything was written; her app sends A again",
    "d": "alice sends A ten minutes after the approval",
    "e": "A has run once; the model sends A a second time (a new call, not a retry after a timeout)",
    "f": "someone else updated todo.md first (it is at version 2 now); then alice sends A",
}
"""The six attempts. In each, action A (`A_ARGS`, user alice) was shown and approved just before."""

WHY: dict[str, str] = {
    "a": "key order is not part of the action: same tool, same arguments, same user",
    "b": "an approval is bound to the user it was shown to",
    "c": "an approval is used up only when the action takes effect, so the retry of the same action runs "
         "(and its idempotency key would stop a second effect if the first try had written)",
    "d": "the approval expired (it lives 5 minutes)",
    "e": "an approval is used up when the action takes effect",
    "f": "the approval is valid, but the write is conditional: expected_version 1 is stale (CONFLICT), "
         "so the newer text is kept",
}


async def _play(label: str, root: Path) -> tuple[bool, str]:
    """Play one attempt for real; return (the write ran, how the attempt ended)."""
    from course_lib.execution import Session
    from course_lib.notes_store import AuditedExecutor, ManualClock, NotesStore, notes_tools

    clock = ManualClock(step=0)
    store = NotesStore(root, clock=clock)
    preview, apply = notes_tools(store)
    if label == "c":  # the first executed try hangs before it writes anything, and times out
        hung: list[bool] = []
        write = apply.handler

        async def hangs_once(arguments: Any, context: Any) -> Any:
            if not hung:
                hung.append(True)
                await anyio.sleep(5)
            return await write(arguments, context)

        apply = dataclasses.replace(apply, handler=hangs_once, timeout=0.05)
    executor = AuditedExecutor([preview, apply], audit=store.audit, ttl=300)
    alice = Session("alice")

    def send(arguments: Any, session: Session = alice, call_id: str = "call_2") -> Awaitable[Any]:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return executor.execute(call_id, "apply_note_update", text, session)

    first = await send(A_ARGS, call_id="call_1")
    executor.approvals.approve(first.result["error"]["action_id"])
    attempt: Any = A_ARGS
    session = alice
    if label == "a":
        attempt = json.dumps(dict(reversed(list(A_ARGS.items()))))
    elif label == "b":
        session = Session("bob")
    elif label == "c":
        await send(A_ARGS, call_id="call_2")  # TIMEOUT: cancelled before it wrote
    elif label == "d":
        clock.advance(600)
    elif label == "e":
        await send(A_ARGS, call_id="call_2")
        writes_before = store.writes
        again = await send(A_ARGS, call_id="call_3")
        return store.writes > writes_before, str(again.error_code or "ok")
    elif label == "f":
        store.write("/workspace/todo.md", "someone else's newer text\n", 1)
    writes_before = store.writes
    execution = await send(attempt, session)
    return store.writes > writes_before, str(execution.error_code or "ok")


def play_attempts() -> dict[str, tuple[bool, str]]:
    """Play every attempt on its own fresh copy of the workspace: {label: (wrote, outcome)}.

    Runs on its own event loop in a background thread, so it works inside a notebook cell too.
    """
    from course_lib.paths import workspace_dir

    async def play_all() -> dict[str, tuple[bool, str]]:
        outcomes = {}
        for label in ATTEMPTS:
            with tempfile.TemporaryDirectory(prefix="course-nb06-") as folder:
                root = Path(folder) / "workspace"
                shutil.copytree(workspace_dir(), root)
                outcomes[label] = await _play(label, root)
        return outcomes

    with start_blocking_portal() as portal:
        return portal.call(play_all)


def check_write_decisions(answer: dict[str, bool]) -> bool:
    """Compare `{label: True if the write runs}` with the real executor, attempt by attempt."""
    if not_answered(answer):
        return failed("Not answered yet: fill in decisions = {'a': True or False, ...} for the six attempts.")
    if not isinstance(answer, dict):
        return failed(f"decisions must be a dict like {{'a': True, 'b': False, ...}}; you gave a {type(answer).__name__}.")
    missing = [label for label in ATTEMPTS if label not in answer]
    if missing:
        return failed(f"decisions has no entry for {', '.join(missing)}: decide all six attempts (a to f).")
    open_ = [label for label in ATTEMPTS if answer[label] is ...]
    if open_:
        return failed(f"Not answered yet: replace the ... of {', '.join(open_)} with True (the write runs) or False.")
    for label in ATTEMPTS:
        if not isinstance(answer[label], bool):
            return failed(f"({label}): answer True (the write runs) or False (it does not); you gave {answer[label]!r}.")
    real = play_attempts()
    for label, (wrote, outcome) in real.items():
        if answer[label] != wrote:
            said = "it writes" if answer[label] else "nothing is written"
            happened = "the write ran" if wrote else f"the real executor answered {outcome} and wrote nothing"
            return failed(f"({label}) {ATTEMPTS[label]}: you said {said}, but {happened} — {WHY[label]}.")
    return passed("all six right: only an exact, unexpired, unused approval of the current version writes.")


SOLUTIONS: Solutions = {
    "check_make_action_id": lambda: _make_action_id_solution,
    "check_write_decisions": lambda: {"a": True, "b": False, "c": True, "d": False, "e": False, "f": False},
}
