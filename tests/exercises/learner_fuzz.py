"""What a learner's cell can hand a check besides an answer: the fuzz of the corpus tests.

`VALUES` are answers of the wrong kind (None, `...`, numbers, text, a huge int whose repr raises, an
object whose every attribute raises, a generator, a list nested deeper than Python recurses...).
`functions(arity)` are functions of the right arity that go wrong: they raise, return early (None),
return the starter's `...`, a generator, an object that raises on every touch, a huge value, or
take the wrong number of arguments; `async_functions(arity)` are their coroutine twins. Each check
must meet every one with one ✗ line, no traceback, and False (`assert_refused`).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any


class Hostile:
    """An object that raises on every touch: attributes, repr, str, ==, iteration, len, truth."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"attribute {name} raises")

    def __repr__(self) -> str:
        raise RuntimeError("repr raises")

    def __str__(self) -> str:
        raise RuntimeError("str raises")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("== raises")

    def __hash__(self) -> int:
        return 0

    def __iter__(self) -> Any:
        raise RuntimeError("iteration raises")

    def __len__(self) -> int:
        raise RuntimeError("len raises")

    def __bool__(self) -> bool:
        raise RuntimeError("bool raises")


class Unprintable(Exception):
    """An exception whose message cannot be turned into text."""

    def __str__(self) -> str:
        raise RuntimeError("str of the exception raises")


def _deep(depth: int = 100_000) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _generator() -> Any:
    yield "arguments"


VALUES: dict[str, Callable[[], Any]] = {
    "None": lambda: None,
    "...": lambda: ...,
    "an int": lambda: 42,
    "a float NaN": lambda: float("nan"),
    "a str": lambda: "answer",
    "bytes": lambda: b"answer",
    "an int too long to print": lambda: 10**5000,
    "an object that raises on every touch": Hostile,
    "a generator": _generator,
    "a list nested 100 000 deep": _deep,
    "an empty list": list,
    "a dict of hostile values": lambda: {"answer": Hostile()},
    "a huge list": lambda: ["x"] * 1_000_000,
    "the type object": lambda: object,
}
"""name → a factory of a value that is no answer at all (a fresh one per use)."""


def functions(arity: int) -> dict[str, Callable[..., Any]]:
    """Functions of `arity` arguments that go wrong, by name."""

    def raises(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("my function broke")

    def raises_unprintable(*args: Any, **kwargs: Any) -> Any:
        raise Unprintable()

    def returns_early(*args: Any, **kwargs: Any) -> Any:
        return None

    def returns_ellipsis(*args: Any, **kwargs: Any) -> Any:
        return ...

    def returns_generator(*args: Any, **kwargs: Any) -> Any:
        return (arg for arg in args)

    def returns_hostile(*args: Any, **kwargs: Any) -> Any:
        return Hostile()

    def returns_huge(*args: Any, **kwargs: Any) -> Any:
        return 10**5000

    def returns_deep(*args: Any, **kwargs: Any) -> Any:
        return _deep()

    def too_few(*args: Any, **kwargs: Any) -> Any:  # called with the check's arguments, it refuses them
        if len(args) + len(kwargs) == arity:
            raise TypeError(f"too_few() takes {arity - 1} positional arguments but {arity} were given")
        return None

    return {"raises": raises, "raises an exception that cannot be printed": raises_unprintable,
            "returns early (None)": returns_early, "returns the starter's ...": returns_ellipsis,
            "returns a generator": returns_generator, "returns an object that raises on every touch": returns_hostile,
            "returns an int too long to print": returns_huge, "returns a list nested 100 000 deep": returns_deep,
            "takes the wrong number of arguments": too_few}  # fmt: skip


def async_functions(arity: int) -> dict[str, Callable[..., Any]]:
    """The coroutine twins of `functions(arity)`: an `async def` that goes wrong the same way."""

    def twin(sync: Callable[..., Any]) -> Callable[..., Any]:
        async def go(*args: Any, **kwargs: Any) -> Any:
            return sync(*args)

        return go

    return {name: twin(fn) for name, fn in functions(arity).items()}


def assert_refused(check: Callable[[Any], Any], answer: Any) -> str:
    """`check(answer)` returns False and prints one ✗ line with no traceback; nothing escapes it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        returned = check(answer)
    printed = out.getvalue()
    assert returned is False, printed
    assert printed.startswith("✗ ") and printed.count("\n") == 1, printed
    assert "Traceback" not in printed and 'File "' not in printed, printed
    return printed
