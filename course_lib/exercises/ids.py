"""What an approval id must hold against a forger: a property over many actions, with the id's size.

An approval is stored under the id of the action a person saw (06 `make_action_id`, 10
`action_id`). Whoever can make the model send actions (text in a tool result can) may send many,
and any one whose id equals an approved id runs on that approval. So two distinct actions must never
share an id, and an id cut from a hash must be long enough that trying actions until one hits is
out of reach. This module judges both, on the learner's function itself:

- `forgery_problem(fn, action)`: `fn` on `SAMPLES` distinct actions that differ from `action` only in
  their arguments (the part a forger controls: the tool is one the model may call, the user is the
  session's). Any two that share an id fail, naming both. Then the id's size: an id that carries the
  action itself (it grows with a long argument) can be hit only by that action; any other id is a
  digest, and its size is measured from the samples (`measured_bits`: per character position, how
  many different characters occur) and must be at least `MIN_BITS`.
- `size_words(report)`: the size, as a passing message states it.

`MIN_BITS` is 64, the size of the course's own `approval.action_id` (16 hex digits of SHA-256): a
forger needs about 2^64 tries to hit one given approval. (Two actions chosen together to share an
id, one harmless to be approved and one harmful, take about 2^32 tries at that size; an app that
fears that keeps the whole digest.)
"""

from __future__ import annotations

import copy
import math
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from course_lib.exercises.answers import difference, raised, shown
from course_lib.lang import say

MIN_BITS = 64
"""The smallest id a check accepts, in bits (the course's `approval.action_id` has 64)."""
SAMPLES = 1024
"""Distinct actions each id function is run on."""
LONG = 4096
"""Characters of the long argument that tells an id which carries the action from a digest."""

Action = tuple[str, dict[str, Any], str]


@dataclass(frozen=True)
class Size:
    """What the samples showed of an id function: bits measured, or that it carries the action."""

    bits: float
    carries_action: bool
    length: int


def _text_leaf(arguments: dict[str, Any]) -> str | None:
    """The first argument (in key order) whose value is a string: the one the samples vary."""
    return next((key for key in sorted(arguments) if isinstance(arguments[key], str)), None)


def variants(action: Action, count: int = SAMPLES, seed: int = 28) -> list[Action]:
    """`count` distinct actions: `action` with one text argument changed (different lengths and
    characters, every one distinct), the tool and the user kept."""
    tool, arguments, user = action
    leaf = _text_leaf(arguments)
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + " -_./"
    out = []
    for i in range(count):
        changed = copy.deepcopy(arguments)
        token = f"{i}:" + "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24)))
        if leaf is None:
            changed[f"note_{i % 7}"] = token
        else:
            changed[leaf] = f"{arguments[leaf]} {token}"
        out.append((tool, changed, user))
    return out


def measured_bits(ids: list[str]) -> float:
    """The id's size as the samples show it: Σ over character positions of log2(how many different
    characters occur there). A hex digest shows 4 bits a character, a constant prefix 0."""
    longest = max(map(len, ids), default=0)
    return sum(math.log2(len({text[j] for text in ids if j < len(text)}) or 1) for j in range(longest))


def forgery_problem(fn: Callable[[str, dict[str, Any], str], Any], action: Action, *,
                    name: str) -> tuple[Size | None, str | None]:  # fmt: skip
    """(the id's size, None) when no two distinct actions share an id and the id is big enough;
    (None, the message naming the problem) otherwise. `name` is the learner's function's name."""
    samples = variants(action)
    ids: dict[str, Action] = {}
    for sample in samples:
        try:
            value = fn(*copy.deepcopy(sample))
        except Exception as error:
            return None, say("{name} raised {error} on an action with the argument {arg}.",
                             "{name} 在参数为 {arg} 的动作上抛出了 {error}。", name=name, error=raised(error),
                             arg=shown(sample[1], 70))
        if not isinstance(value, str) or not value:
            return None, say("{name} must return a non-empty str; on another action it returned {value}.",
                             "{name} 必须返回非空的 str；在另一个动作上它返回了 {value}。", name=name, value=shown(value))
        value = str.__str__(value)
        if value in ids and ids[value] != sample:
            size = measured_bits(list(ids))
            return None, say("two different actions got the same id {id}: {one} and {other} (the same tool and user): "
                             "an approval of one would run the other. It took only {tries} actions to find them: your "
                             "ids hold about {bits:.0f} bits. Hash the whole action and keep at least {min} bits "
                             "(16 hex digits).",
                             "两个不同的动作得到了同一个 id {id}：{one} 和 {other}（工具和用户都相同）：批准其中一个"
                             "就会运行另一个。只试了 {tries} 个动作就找到了它们：你的 id 大约只有 {bits:.0f} 位。"
                             "请对整个动作求哈希，并至少保留 {min} 位（16 个十六进制位）。",
                             id=shown(value, 40), **dict(zip(("one", "other"), difference(ids[value][1], sample[1], 60))),
                             bits=size, tries=f"{len(ids) + 1:,}", min=MIN_BITS)
        ids[value] = sample
    tool, arguments, user = action
    leaf = _text_leaf(arguments) or "note"
    long_action = (tool, {**copy.deepcopy(arguments), leaf: "x" * LONG}, user)
    try:
        long_id = fn(*long_action)
    except Exception as error:
        return None, say("{name} raised {error} on an action with a long argument ({n} characters).",
                         "{name} 在带一个长参数（{n} 个字符）的动作上抛出了 {error}。", name=name, error=raised(error), n=LONG)
    if not isinstance(long_id, str) or not long_id:
        return None, say("{name} must return a non-empty str; on an action with a long argument it returned {value}.",
                         "{name} 必须返回非空的 str；在带一个长参数的动作上它返回了 {value}。", name=name, value=shown(long_id))
    if len(long_id) >= LONG:  # the id carries the action itself: only that action has it
        return Size(bits=math.inf, carries_action=True, length=len(long_id)), None
    bits = measured_bits(list(ids))
    if bits < MIN_BITS:
        return None, say("your ids hold about {bits:.0f} bits ({length} characters, {each}): a forger who can send many "
                         "actions finds one whose id equals an approved id in about 2^{bits:.0f} tries, within reach. "
                         "Keep at least {min} bits: 16 hex digits of SHA-256 or more.",
                         "你的 id 大约只有 {bits:.0f} 位（{length} 个字符，{each}）：能发送很多动作的伪造者，大约试 "
                         "2^{bits:.0f} 次就能找到一个 id 等于已批准 id 的动作，这是做得到的。请至少保留 {min} 位："
                         "SHA-256 的 16 个或更多十六进制位。",
                         bits=bits, length=max(map(len, ids)), each=_each(list(ids)), min=MIN_BITS)
    return Size(bits=bits, carries_action=False, length=max(map(len, ids))), None


def _each(ids: list[str]) -> str:
    """How the characters vary: 'the first 4 the same on every id' or 'every one varies'."""
    longest = max(map(len, ids))
    fixed = sum(1 for j in range(longest) if len({text[j] for text in ids if j < len(text)}) == 1)
    if fixed:
        return say("{n} of them the same on every id", "其中 {n} 个在每个 id 上都一样", n=fixed)
    return say("every one varies", "每个字符都在变")


def size_words(size: Size) -> str:
    """The id's size, as a passing message states it."""
    if size.carries_action:
        return say("your ids carry the whole action, so only that very action has its id",
                   "你的 id 带着整个动作，所以只有那个动作本身才有这个 id")
    return say("no two of {n} distinct actions share an id, and your ids hold about {bits:.0f} bits (at least {min} "
               "needed): hitting one approved id takes about 2^{bits:.0f} tries",
               "在 {n} 个不同的动作里没有两个共用一个 id，你的 id 大约有 {bits:.0f} 位（至少需要 {min} 位）："
               "要碰上一个已批准的 id，大约要试 2^{bits:.0f} 次", n=f"{SAMPLES:,}", bits=size.bits, min=MIN_BITS)
