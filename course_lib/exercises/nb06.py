"""Checks for notebook 06 (approval and side effects).

- `check_make_action_id(fn)`: the learner's `make_action_id(tool, arguments, user_id) -> str`
  is run on a battery of pairs of actions. Whether a pair must share an id is decided by the
  library's own `approval.action_id`: same id exactly when it is the same tool, the same
  arguments (in any key order) and the same user.
  Then two properties, for every case: every order of the keys, at every level, gives one id;
  every one-character change of the content, the path, the tool or the user gives another. Then
  what a forged approval cannot hit (`ids.forgery_problem`): no two of 1,024 distinct actions share
  an id, and the id holds at least 64 bits (the passing line states its size).
- `check_write_decisions(answer)`: for six described attempts, will the write run? Each attempt
  is then played for real — a fresh copy of the workspace, a `NotesStore`, an `AuditedExecutor`
  and an approval of action A — and the learner's answer is compared with what happened.

Whatever the learner passes (None, a number, a function that raises, returns a coroutine or an
object whose repr raises, a mapping that cannot be read), a check prints one line naming the
mistake; it never lets a traceback of its own through. No check calls a model.

Every message the checks write themselves, the pairs' labels and the attempts' descriptions follow
the edition's language (`course_lib.lang.say`); the wire values they quote stay as they are.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from anyio.from_thread import start_blocking_portal

from course_lib.approval import action_id
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import difference, unassigned
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.ids import forgery_problem, size_words
from course_lib.lang import language, say


class _Said(Mapping[str, str]):
    """{label: text}, each text in both languages and read in the edition's (`say`)."""

    def __init__(self, texts: dict[str, tuple[str, str]]) -> None:
        self._texts = texts

    def __getitem__(self, label: str) -> str:
        return say(*self._texts[label])

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    def __repr__(self) -> str:
        return repr(dict(self))


def _shown(value: Any, limit: int = 60) -> str:
    """`repr(value)` cut to `limit` characters, whatever the value (its own __repr__ may raise)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<a {type(value).__name__} whose repr() fails>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _raised(error: BaseException) -> str:
    """`Type: message` of an exception the learner's code raised (its own __str__ may raise)."""
    try:
        message = str(error)
    except Exception:
        message = "(its message cannot be shown)"
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _drop_coroutine(value: Any) -> bool:
    """Close a coroutine the learner's `async def` returned (so it is never left un-awaited)."""
    if inspect.iscoroutine(value):
        value.close()
        return True
    return False


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

PAIRS_ZH: list[str] = [
    "同一个动作，请求了两次",
    "同样的参数，键换了一种顺序",
    "嵌套对象的键换了一种顺序",
    "另一段内容",
    "另一个路径",
    "另一个工具",
    "另一个用户",
    'expected_version 为 1（整数）与 "1"（字符串）',
    "内容带与不带末尾的换行符",
    '用户名和工具名连成一片（"apply_note_update" + "alice" 对 "apply_note_updatea" + "lice"）',
]
"""What differs in each pair of `PAIRS`, in Chinese (same order)."""


def _fresh(action: Action) -> Action:
    """A deep copy, so the learner's function may change what it gets without spoiling the battery."""
    tool, arguments, user = action
    return tool, json.loads(json.dumps(arguments)), user


def check_make_action_id(fn: Callable[[str, dict[str, Any], str], str]) -> bool:
    """Run `fn` on every pair of `PAIRS`, then on every key order and every one-character change
    of a case; name the first pair or property it gets wrong and the likely mistake."""
    if not_answered(fn):
        return failed(unassigned("make_action_id", "make_action_id(tool, arguments, user_id)"))
    if not callable(fn):
        return failed(say(f"Pass the function itself (make_action_id, without parentheses); you passed {_shown(fn)}.",
                          f"请传入函数本身（make_action_id，不带括号）；你传入的是 {_shown(fn)}。"))
    for number, ((english, first, second), chinese) in enumerate(zip(PAIRS, PAIRS_ZH), start=1):
        what = say(english, chinese)
        ids, problem = _ids(fn, [first, second], say(f"pair {number} ({what})", f"第 {number} 对（{what}）"))
        if problem:
            return failed(problem)
        same = action_id(*first) == action_id(*second)
        if same and ids[0] != ids[1]:
            one, other = difference(ids[0], ids[1], 30)
            return failed(say(f"pair {number} ({what}) is ONE action and must get the same id; yours gave "
                              f"{one} and {other}. Hint: {_hint(number, fn)}",
                              f"第 {number} 对（{what}）是同一个动作，必须得到同一个 id；你的函数给出了 "
                              f"{one} 和 {other}。提示：{_hint(number, fn)}"))
        if not same and ids[0] == ids[1]:
            return failed(say(f"pair {number} ({what}) are TWO different actions but get the same id {_cut(ids[0])}: "
                              f"approving one would authorize the other. Hint: {_hint(number, fn)}",
                              f"第 {number} 对（{what}）是两个不同的动作，却得到了同一个 id {_cut(ids[0])}："
                              f"批准其中一个就会授权另一个。提示：{_hint(number, fn)}"))
    if (problem := _every_key_order(fn)) or (problem := _every_one_character_change(fn)):
        return failed(problem)
    size, problem = forgery_problem(fn, ("apply_note_update", dict(NOTE), "alice"), name="make_action_id")
    if size is None:
        return failed(problem or "")
    message = say(f"all {len(PAIRS)} pairs right, every key order gives one id and every one-character change "
                  f"another: key order is ignored; tool, every argument and the user are bound. And {size_words(size)}.",
                  f"全部 {len(PAIRS)} 对都对了，每一种键的顺序都得到同一个 id，每一处单个字符的改动都得到另一个："
                  f"键的顺序被忽略；工具、每个参数和用户都被绑定。而且{size_words(size)}。")
    if _joined_without_separator(fn):
        message += say(" One caution: your id joins the parts with nothing between them. It holds here only by luck —"
                       " a JSON object ends at its own closing brace, and MCP's naming rule for tools allows only letters,"
                       " digits, '_', '-' and '.' — yet 'x{}' + '{}' + 'y' and 'x' + '{}' + '{}y' give the same id. Make it safe by construction: hash one JSON list [tool, arguments,"
                       " user], or put a separator no part can contain.",
                       "有一点要注意：你的 id 把各部分直接连在一起，中间什么都没有。它在这里成立只是侥幸：一个 JSON 对象"
                       "在它自己的右花括号处结束，而 MCP 的工具命名规则只允许字母、数字、'_'、'-' 和 '.'，可是 "
                       "'x{}' + '{}' + 'y' 和 'x' + '{}' + '{}y' 会得到同一个 id。让它在构造上就安全：对一个 JSON 列表 "
                       "[tool, arguments, user] 求哈希，或者在各部分之间放一个任何部分都不可能包含的分隔符。")
    return passed(message)


def _ids(fn: Callable[..., Any], actions: list[Action], where: str) -> tuple[list[str], str | None]:
    """The learner's id of each action (plain `str`s), or the message naming why there is none."""
    ids = []
    for action in actions:
        try:
            value = fn(*_fresh(action))
        except TypeError as error:
            return [], say(f"make_action_id raised {_raised(error)} on {where}: it must take three arguments, "
                           "make_action_id(tool, arguments, user_id).",
                           f"make_action_id 在{where}上抛出了 {_raised(error)}：它必须接受三个参数，"
                           "make_action_id(tool, arguments, user_id)。")
        except Exception as error:
            return [], say(f"make_action_id raised {_raised(error)} on {where}.",
                           f"make_action_id 在{where}上抛出了 {_raised(error)}。")
        if value is ...:
            return [], say("Not answered yet: make_action_id still returns ...; return one string per action.",
                           "还没有作答：make_action_id 仍然返回 ...；请为每个动作返回一个字符串。")
        if _drop_coroutine(value):
            return [], say("make_action_id is an async def: it returned a coroutine, not an id. Write a plain def "
                           "(hashing needs no await).",
                           "make_action_id 是 async def：它返回的是协程，不是 id。请写成普通的 def（求哈希不需要 await）。")
        if not isinstance(value, str) or not value:
            return [], say(f"make_action_id must return a non-empty str; it returned {_cut(_shown(value))} "
                           f"({type(value).__name__}) on {where}. {_type_hint(value)}",
                           f"make_action_id 必须返回非空的 str；它在{where}上返回了 {_cut(_shown(value))}"
                           f"（{type(value).__name__}）。{_type_hint(value)}")
        ids.append(str.__str__(value))  # a plain str: a subclass's own __eq__ decides nothing here
    return ids, None


KEY_ORDERS = {"path": "/workspace/todo.md", "tags": {"topic": "mcp", "week": "4", "meta": {"by": "alice", "level": 2}},
              "expected_version": 1}  # fmt: skip
"""A case whose keys the check puts in every order, at all three levels (3! × 3! × 2! = 72 orders)."""


def _orders(value: Any) -> list[Any]:
    """`value` with the keys of every object in it in every possible order (equal values, other texts)."""
    if not isinstance(value, dict):
        return [value]
    keys = list(value)
    inner = [_orders(value[key]) for key in keys]
    every = []
    for picked in itertools.product(*inner):
        for order in itertools.permutations(range(len(keys))):
            every.append({keys[i]: picked[i] for i in order})
    return every


def _every_key_order(fn: Callable[..., Any]) -> str | None:
    """One id for every order of the keys, at every level of `KEY_ORDERS`."""
    orders = _orders(KEY_ORDERS)
    ids, problem = _ids(fn, [("tag_note", order, "alice") for order in orders], say("a key order", "某一种键的顺序"))
    if problem:
        return problem
    if len(set(ids)) > 1:
        bad = next(order for order, the_id in zip(orders, ids) if the_id != ids[0])
        return say(f"the same arguments in {len(orders)} key orders (three levels deep) got {len(set(ids))} different "
                   f"ids, e.g. {_cut(json.dumps(bad), 70)}: an approval would not match its own action. Serialize with "
                   "json.dumps(arguments, sort_keys=True): it sorts every level, however deep.",
                   f"同样的参数按 {len(orders)} 种键的顺序（三层嵌套）排列，得到了 {len(set(ids))} 个不同的 id，例如 "
                   f"{_cut(json.dumps(bad), 70)}：批准就对不上它自己的动作了。请用 json.dumps(arguments, sort_keys=True) "
                   "序列化：它会排序每一层，不管嵌套多深。")
    return None


def _every_one_character_change(fn: Callable[..., Any]) -> str | None:
    """Another id for every deletion or change of one character of the content, path, tool or user."""
    tool, arguments, user = "apply_note_update", dict(NOTE), "alice"
    base, problem = _ids(fn, [(tool, arguments, user)], say("action A", "动作 A"))
    if problem:
        return problem
    variants: list[tuple[str, Action]] = []
    for part, text in (("content", arguments["content"]), ("path", arguments["path"]), ("tool", tool), ("user", user)):
        for i in range(len(text)):
            for changed in (text[:i] + text[i + 1:], text[:i] + ("x" if text[i] != "x" else "y") + text[i + 1:]):
                if part in ("content", "path"):
                    variants.append((part, (tool, {**arguments, part: changed}, user)))
                else:
                    variants.append((part, (changed, arguments, user) if part == "tool" else (tool, arguments, changed)))
    ids, problem = _ids(fn, [action for _, action in variants], say("a one-character change", "某一处单个字符的改动"))
    if problem:
        return problem
    for (part, action), the_id in zip(variants, ids):
        if the_id == base[0]:
            shown = {"content": action[1]["content"], "path": action[1]["path"], "tool": action[0], "user": action[2]}[part]
            return say(f"changing one character of the {part} ({_shown(shown)}) kept A's id: that one-character "
                       "change would be approved with A. Hash the exact text of every part, untouched.",
                       f"把 {part} 改动一个字符（{_shown(shown)}）之后，id 还是 A 的：这处单个字符的改动会跟着 A 一起被批准。"
                       "请对每一部分原样的文本求哈希，不要改动它。")
    return None


def _cut(value: str, limit: int = 30) -> str:
    return repr(value if len(value) <= limit else value[: limit - 1] + "…")


def _type_hint(value: Any) -> str:
    """What the learner most likely returned instead of text."""
    if hasattr(value, "hexdigest"):
        return say("That is the hash object itself: return its .hexdigest() (text).",
                   "这是哈希对象本身：请返回它的 .hexdigest()（文本）。")
    if isinstance(value, bytes):
        return say("That is .digest() (bytes): return .hexdigest(), which is text.",
                   "这是 .digest()（bytes）：请返回 .hexdigest()，它是文本。")
    if isinstance(value, int):
        return say("Python's hash() returns an int, and for text it changes from one run of Python to the next "
                   "(hash randomisation): an approval stored before a restart would never match. Use "
                   "hashlib.sha256(text.encode()).hexdigest().",
                   "Python 的 hash() 返回 int，而且对文本来说，它在每次运行 Python 时都不一样（哈希随机化）："
                   "重启之前存下的批准永远也匹配不上。请用 hashlib.sha256(text.encode()).hexdigest()。")
    return say("An id is stored and compared as text.", "id 是作为文本来存储和比较的。")


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
        return say("you turn values into text with str() (or an f-string): str() of a nested dict keeps its "
                   "insertion order, and {'x': 1} becomes the same as the string \"{'x': 1}\". Serialize the whole "
                   "arguments with json.dumps(arguments, sort_keys=True): it sorts every level and keeps the types.",
                   "你用 str()（或 f-string）把值变成了文本：嵌套 dict 的 str() 保留插入顺序，而且 {'x': 1} 会变得"
                   "和字符串 \"{'x': 1}\" 一模一样。请用 json.dumps(arguments, sort_keys=True) 序列化整个参数："
                   "它会排序每一层，并保留类型。")
    if number in (4, 5) and _probe_equal(fn, ("t", {"a": 1}, "u"), ("t", {"a": 2}, "u")):
        return say("the id ignores the values: sorted(arguments) and arguments.keys() give only the keys; hash the values too.",
                   "这个 id 忽略了值：sorted(arguments) 和 arguments.keys() 只给出键；把值也一起求哈希。")
    if language() == "zh-CN":
        return _HINTS_ZH.get(number, "把每个参数值按给定的原样绑定。")
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


_HINTS_ZH = {
    1: "id 只能取决于它的输入（不能有时间、计数器、uuid 或任何随机成分）。",
    2: "id 跟随了键的插入顺序：str(dict) 和不带 sort_keys=True 的 json.dumps 都会保留这个顺序。"
       "请用 json.dumps(arguments, sort_keys=True)。",
    3: "要在每一层排序键，而不只是顶层：sorted(arguments.items()) 只排序一层；"
       "json.dumps(arguments, sort_keys=True) 会排序所有层。",
    6: "把工具名包括进去。",
    7: "把用户 id 包括进去：为 alice 做的批准不能授权 bob。",
    8: "保留 JSON 类型：str(value) 或 f-string 会让 1 和 \"1\" 看起来一样；json.dumps 能把它们分开。",
    9: "保留原样的文本：不要裁剪或改写这些值。",
    10: "你把名字直接连在一起，中间什么都没有：'apply_note_update' + 'alice' 和 'apply_note_updatea' + 'lice' "
        "是同一段文本。请对一个 JSON 列表 [tool, arguments, user] 求哈希，或者在各部分之间放一个任何名字都"
        "不可能包含的分隔符。",
}  # fmt: skip


def _make_action_id_solution(tool: str, arguments: dict[str, Any], user_id: str) -> str:
    # One JSON list keeps the three parts apart; sort_keys sorts every level of the arguments.
    text = json.dumps([tool, arguments, user_id], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "act_" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# ---- exercise 2: will the write run? ---------------------------------------------------------

A_ARGS = {"path": "/workspace/todo.md", "content": "# To do\n\n- [x] Try head 5 and list which objects change\n",
          "expected_version": 1}  # fmt: skip
"""Action A: alice replaces /workspace/todo.md; a person approved exactly this (approvals live 5 minutes)."""

ATTEMPTS: Mapping[str, str] = _Said({
    "a": ("alice sends A again, with its keys in another order", "alice 再次发送 A，键换了一种顺序"),
    "b": ("bob sends exactly A's tool and arguments", "bob 发送与 A 完全相同的工具和参数"),
    "c": ("alice sends A with the path written as todo.md (the same file, named relatively)",
          "alice 发送 A，但路径写成 todo.md（同一个文件，用相对路径指名）"),
    "d": ("alice sends A ten minutes after the approval", "alice 在批准十分钟之后发送 A"),
    "e": ("A has run once; the model sends A a second time", "A 已经运行过一次；模型第二次发送 A"),
    "f": ("alice sends A four minutes after the approval", "alice 在批准四分钟之后发送 A"),
})
"""The six attempts. In each, action A (`A_ARGS`, user alice) was shown and approved just before."""

WHY: Mapping[str, str] = _Said({
    "a": ("key order is not part of the action: same tool, same arguments, same user",
          "键的顺序不属于动作：同一个工具、同样的参数、同一个用户"),
    "b": ("an approval is bound to the user it was shown to", "批准绑定到它展示给的那个用户"),
    "c": ("the action is the arguments as sent: 'todo.md' names the same file but is other text, so another "
          "action nobody approved (that is why the preview hands out the canonical path)",
          "动作就是发送出去的参数：'todo.md' 指的是同一个文件，但它是另一段文本，所以是另一个没人批准过的动作"
          "（这正是预览给出标准化路径的原因）"),
    "d": ("the approval expired (it lives 5 minutes)", "批准过期了（它的有效期是 5 分钟）"),
    "e": ("an approval is used up when the action takes effect", "动作生效时批准就用掉了"),
    "f": ("the approval lives 5 minutes, so four minutes later it still holds, once",
          "批准的有效期是 5 分钟，所以四分钟之后它仍然有效，可以用一次"),
})


async def _play(label: str, root: Path) -> tuple[bool, str]:
    """Play one attempt for real; return (the write ran, how the attempt ended)."""
    from course_lib.execution import Session
    from course_lib.notes_store import AuditedExecutor, ManualClock, NotesStore, notes_tools

    clock = ManualClock(step=0)
    store = NotesStore(root, clock=clock)
    try:
        executor = AuditedExecutor(notes_tools(store), audit=store.audit, ttl=300)
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
            attempt = {**A_ARGS, "path": "todo.md"}
        elif label == "d":
            clock.advance(600)
        elif label == "e":
            await send(A_ARGS, call_id="call_2")
        elif label == "f":
            clock.advance(240)
        writes_before = store.writes
        execution = await send(attempt, session, call_id="call_3")
        return store.writes > writes_before, str(execution.error_code or "ok")
    finally:
        store.close()


def _on_fresh_workspaces(labels: Iterable[str], play: Callable[[str, Path], Awaitable[Any]], prefix: str) -> dict[str, Any]:
    """`{label: await play(label, root)}`, each label on its own fresh copy of the workspace at `root`.

    Runs on its own event loop in a background thread, so it works inside a notebook cell too
    (06's attempts and 06b's sends both play this way).
    """
    from course_lib.paths import workspace_dir

    async def play_all() -> dict[str, Any]:
        outcomes = {}
        for label in labels:
            with tempfile.TemporaryDirectory(prefix=prefix) as folder:
                root = Path(folder) / "workspace"
                shutil.copytree(workspace_dir(), root)
                outcomes[label] = await play(label, root)
        return outcomes

    with start_blocking_portal() as portal:
        return portal.call(play_all)


def play_attempts() -> dict[str, tuple[bool, str]]:
    """Play every attempt on its own fresh copy of the workspace: {label: (wrote, outcome)}."""
    return _on_fresh_workspaces(ATTEMPTS, _play, "course-nb06-")


def _decisions(answer: Any) -> tuple[dict[str, Any], str | None]:
    """The learner's decisions as a plain dict, or the message naming why they cannot be read."""
    if not isinstance(answer, Mapping):
        kind = type(answer).__name__
        return {}, say(f"decisions must be a dict like {{'a': True, 'b': False, ...}}; you gave a {kind}.",
                       f"decisions 必须是形如 {{'a': True, 'b': False, ...}} 的 dict；你给的是一个 {kind}。")
    try:
        decisions = {key: answer[key] for key in ATTEMPTS if key in answer}
    except Exception as error:
        return {}, say(f"decisions could not be read: looking an entry up raised {_raised(error)}; use a plain dict.",
                       f"decisions 读不出来：查找其中一项时抛出了 {_raised(error)}；请用普通的 dict。")
    missing = [label for label in ATTEMPTS if label not in decisions]
    if missing:
        upper = [label for label in missing if _has(answer, label.upper())]
        hint = say(" The labels are lowercase: 'a', not 'A'.", "标签是小写的：'a'，不是 'A'。") if upper else ""
        return {}, say(f"decisions has no entry for {', '.join(missing)}: decide all six attempts (a to f).{hint}",
                       f"decisions 里没有 {', '.join(missing)} 的条目：请对全部六次尝试（a 到 f）作出判断。{hint}")
    return decisions, None


def _has(mapping: Mapping[Any, Any], key: str) -> bool:
    try:
        return key in mapping
    except Exception:
        return False


def check_write_decisions(answer: dict[str, bool]) -> bool:
    """Compare `{label: True if the write runs}` with the real executor, attempt by attempt."""
    if not_answered(answer):
        return failed(say("Not answered yet: fill in decisions = {'a': True or False, ...} for the six attempts.",
                          "还没有作答：为六次尝试填好 decisions = {'a': True 或 False, ...}。"))
    decisions, problem = _decisions(answer)
    if problem:
        return failed(problem)
    open_ = ", ".join(label for label in ATTEMPTS if decisions[label] is ...)
    if open_:
        return failed(say(f"Not answered yet: replace the ... of {open_} with True (the write runs) or False.",
                          f"还没有作答：把 {open_} 的 ... 换成 True（写入会运行）或 False。"))
    for label in ATTEMPTS:
        if not isinstance(decisions[label], bool):
            given = _shown(decisions[label])
            return failed(say(f"({label}): answer True (the write runs) or False (it does not); you gave {given}.",
                              f"({label})：请回答 True（写入会运行）或 False（不会）；你给的是 {given}。"))
    real = play_attempts()
    for label, (wrote, outcome) in real.items():
        if decisions[label] != wrote:
            said = say("it writes", "会写入") if decisions[label] else say("nothing is written", "什么也不写")
            happened = (say("the write ran", "写入运行了") if wrote else
                        say(f"the real executor answered {outcome} and wrote nothing", f"真实的执行器回答 {outcome}，什么也没写"))
            return failed(say(f"({label}) {ATTEMPTS[label]}: you said {said}, but {happened} — {WHY[label]}.",
                              f"({label}) {ATTEMPTS[label]}：你说{said}，但{happened}。{WHY[label]}。"))
    return passed(say("all six right: only the exact action, for the user it was shown to, unused and unexpired, writes.",
                      "六个全对：只有确切的那个动作、对它被展示给的那个用户、没用过也没过期，才会写入。"))


SOLUTIONS: Solutions = {
    "check_make_action_id": lambda: _make_action_id_solution,
    "check_write_decisions": lambda: {"a": True, "b": False, "c": False, "d": False, "e": False, "f": True},
}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
