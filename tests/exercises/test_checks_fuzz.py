"""No answer breaks a check of notebooks 00 to 04c: whatever a learner passes (None, `...`, wrong
types, an object whose every attribute raises, a generator, an int too long to print, a list nested
too deep, a function that raises, returns early or returns any of those), the check returns False
and prints one ✗ line, never a library traceback.

A fixed table of the nasty values first, then hypothesis (derandomized: the same examples every
run) over JSON-like values in the answer's own shape: as a value answer, inside a value answer's
dict, and as what a function answer returns.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

NOTEBOOKS = ("nb00", "nb01", "nb02", "nb03", "nb03b", "nb03c", "nb04", "nb04b", "nb04c")
MODULES = [importlib.import_module(f"course_lib.exercises.{name}") for name in NOTEBOOKS]
CHECKS = [(module, name) for module in MODULES for name in module.SOLUTIONS]
IDS = [f"{module.__name__.rsplit('.', 1)[1]}.{name}" for module, name in CHECKS]
NEEDS_NODE = {"check_reference_predictions"}  # runs the reference server: only when its shape tests pass


class Hostile:
    """Every attribute, comparison, conversion and iteration raises."""

    def __getattr__(self, name):
        raise RuntimeError(f"attribute {name}")

    def __repr__(self):
        raise RuntimeError("repr")

    __str__ = __repr__

    def __eq__(self, other):
        raise RuntimeError("eq")

    def __hash__(self):
        raise RuntimeError("hash")

    def __bool__(self):
        raise RuntimeError("bool")

    def __iter__(self):
        raise RuntimeError("iter")

    def __len__(self):
        raise RuntimeError("len")


class HostileDict(dict):
    """A dict whose every way of reading raises."""

    def __getitem__(self, key):
        raise RuntimeError("getitem")

    def get(self, *args):
        raise RuntimeError("get")

    def items(self):
        raise RuntimeError("items")

    def keys(self):
        raise RuntimeError("keys")

    def __iter__(self):
        raise RuntimeError("iter")

    def __contains__(self, key):
        raise RuntimeError("contains")


class CallableHostile(Hostile):
    def __call__(self, *args, **kwargs):
        return Hostile()


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def returning(value):
    def answer(*args, **kwargs):
        return value

    answer.__name__ = f"returns_{type(value).__name__}"
    return answer


def raises(*args, **kwargs):
    raise RuntimeError("the learner's own error")


def recurses(*args, **kwargs):
    return recurses(*args, **kwargs)


def no_parameters():
    return 1


VALUES = {
    "None": None, "...": ..., "0": 0, "True": True, "a str": "text", "''": "", "[]": [], "{}": {}, "set()": set(),
    "bytes": b"bytes", "nan": float("nan"), "object()": object(), "Hostile": Hostile(), "HostileDict": HostileDict(a=1),
    "a generator": (n for n in range(3)), "10**5000": 10**5000, "a huge str": "x" * 10**6, "nested 10**5 deep": nested(10**5),
    "[Hostile]": [Hostile()], "{'a': Hostile}": {"a": Hostile()}, "a class": int, "a callable Hostile": CallableHostile(),
}  # fmt: skip
FUNCTIONS = {
    "raises": raises, "recurses": recurses, "takes no parameters": no_parameters,
    **{f"returns {label}": returning(value) for label, value in VALUES.items() if label != "a callable Hostile"},
}


def verdict(check, answer) -> tuple[object, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        returned = check(answer)
    return returned, out.getvalue()


def assert_refused_readably(returned, printed) -> None:
    assert returned is False, printed
    assert printed.startswith("✗ ") and printed.count("\n") == 1, printed
    assert "Traceback" not in printed


@pytest.fixture(autouse=True)
def english(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "en")


def _nasty_cases() -> list[tuple[object, str, str]]:
    """(module, check, label): every nasty value for every check, and every nasty function for the
    checks whose answer is a function (for the others a function is just one more wrong type)."""
    return [(module, name, label) for module, name in CHECKS
            for label in [*VALUES, *(FUNCTIONS if callable(module.SOLUTIONS[name]()) else ())]]


NASTY = _nasty_cases()


@pytest.mark.parametrize(("module", "name", "label"), NASTY,
                         ids=[f"{m.__name__.rsplit('.', 1)[1]}.{n}-{label}" for m, n, label in NASTY])
def test_a_nasty_answer_gets_one_readable_line(module, name, label, request):
    if name in NEEDS_NODE:
        request.getfixturevalue("node_tools")
    answer = VALUES[label] if label in VALUES else FUNCTIONS[label]
    assert_refused_readably(*verdict(getattr(module, name), answer))


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)  # fmt: skip
FUZZ = settings(max_examples=12, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _fuzzable(module, name) -> bool:
    return name not in NEEDS_NODE


@pytest.mark.parametrize(("module", "name"), [c for c in CHECKS if _fuzzable(*c)],
                         ids=[i for c, i in zip(CHECKS, IDS) if _fuzzable(*c)])
@FUZZ
@given(data=st.data())
def test_any_json_in_the_answers_shape_gets_one_readable_line(module, name, data):
    """The answer's shape with JSON anywhere in it: a function returning it, or a value answer with
    one of its entries (or itself) replaced. A right answer may come out by chance: then ✓ is fine."""
    solution = module.SOLUTIONS[name]()
    value = data.draw(JSON)
    if callable(solution):
        answer = returning(value)
    elif isinstance(solution, dict) and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(solution, key=str)))
        answer = {**solution, key: value}
    elif isinstance(solution, list) and data.draw(st.booleans()):
        answer = list(solution)
        answer[data.draw(st.integers(0, len(answer) - 1))] = value
    else:
        answer = value
    returned, printed = verdict(getattr(module, name), answer)
    assert "Traceback" not in printed and printed.count("\n") == 1, printed
    assert (returned, printed[:1]) in ((False, "✗"), (True, "✓")), printed


def test_the_nested_value_is_deeper_than_the_interpreter_recurses():
    assert 10**5 > sys.getrecursionlimit()
