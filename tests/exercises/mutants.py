"""Wrong answers made from the right ones: mutants of each exercise's reference solution.

A corpus holds the wrong answers someone imagined; a check that passes it can still accept a kind
nobody wrote down. Here the wrong answers are generated: each reference solution (a function, or a
class for nb10's idempotency store) is parsed, and each mutant changes it in one place, the way
learners go wrong:

- `drop`: a statement left out (a step skipped: a `return`, a `records[key] = …`, an `append`);
- `index0`: `x[i]` read as `x[0]` (the first call, the first item, the first block);
- `truncate`: a returned value cut to its first element (`value[:1]`), and a slice of a digest cut
  to 2 characters (an 8-bit id);
- `reverse`: a loop walking its items backwards (outputs paired by position, reordered);
- `swap_id`: one id read in place of another (`call_id` ↔ `id`, `tool_use_id`, `item_id`,
  `output_index` → `sequence_number`);
- `compare`: `<` ↔ `<=`, `==` ↔ `!=`, `in` ↔ `not in`, `is` ↔ `is not`; `and` ↔ `or`; `not x` → `x`;
- `constant`: `True` ↔ `False`, an integer n → n + 1;
- `keyword`: a keyword argument left out (`sort_keys=True`, `stream=True`, `exclude_none=True`).

For the answers that are data (a dict of decisions, a set of panels, a schema), `data_mutants` flips
one entry at a time. `tests/exercises/test_mutations.py` runs every mutant through its check; a
mutant the check accepts is either a hole in the check or behaves exactly like the reference
(an "equivalent mutant"), and the test keeps the list of those, each with the reason.
"""

from __future__ import annotations

import ast
import copy
import inspect
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

SWAP_IDS = {"call_id": "id", "id": "call_id", "tool_use_id": "id", "item_id": "id", "output_index": "sequence_number"}
FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
        ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}  # fmt: skip


@dataclass(frozen=True)
class Mutant:
    """One changed answer: a stable `key` (operator, line and column in the reference's source,
    detail), what changed in words, and the answer itself."""

    key: str
    change: str
    answer: Any


def _sites(tree: ast.AST) -> Iterator[tuple[str, int, str, Callable[[ast.AST], ast.AST | None]]]:
    """(operator, node index in ast.walk order, detail, how to change that node)."""
    annotations = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.AnnAssign)
                   for inner in ast.walk(node.annotation)}  # fmt: skip
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in annotations:
            continue
        for field in ("body", "orelse", "finalbody") if not isinstance(node, ast.Module | ast.ClassDef) else ():
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                for position, statement in enumerate(block):
                    if _is_docstring(statement) or isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                        continue
                    yield "drop", index, f"{field}[{position}] line {statement.lineno}", _dropper(field, position)
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            if not (isinstance(node.slice, ast.Constant) and node.slice.value in (0, "call_id", "id")):
                yield "index0", index, f"line {node.lineno}", _set(slice=ast.Constant(0))
            if isinstance(node.slice, ast.Constant) and node.slice.value in SWAP_IDS:
                yield "swap_id", index, f"[{node.slice.value!r}] line {node.lineno}", _set(
                    slice=ast.Constant(SWAP_IDS[node.slice.value]))
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            upper = node.slice.upper
            if isinstance(upper, ast.Constant) and isinstance(upper.value, int) and upper.value >= 4:
                yield "truncate", index, f"[:{upper.value}] → [:2] line {node.lineno}", _set(
                    slice=ast.Slice(lower=node.slice.lower, upper=ast.Constant(2), step=None))
        if isinstance(node, ast.Return) and node.value is not None:
            yield "truncate", index, f"return …[:1] line {node.lineno}", _set(
                value=ast.Subscript(value=node.value, slice=ast.Slice(upper=ast.Constant(1)), ctx=ast.Load()))
        if isinstance(node, ast.For | ast.comprehension):
            target = node.iter
            yield "reverse", index, f"line {getattr(node, 'lineno', target.lineno)}", _set(iter=ast.Call(
                func=ast.Name("reversed", ast.Load()), args=[ast.Call(func=ast.Name("list", ast.Load()), args=[target],
                                                                      keywords=[])], keywords=[]))  # fmt: skip
        if isinstance(node, ast.Attribute) and node.attr in SWAP_IDS:
            yield "swap_id", index, f".{node.attr} line {node.lineno}", _set(attr=SWAP_IDS[node.attr])
        if isinstance(node, ast.Compare):
            for position, op in enumerate(node.ops):
                if type(op) in FLIP:
                    yield "compare", index, f"{type(op).__name__} line {node.lineno}", _flip(position)
        if isinstance(node, ast.BoolOp):
            yield "compare", index, f"{type(node.op).__name__} line {node.lineno}", _set(
                op=ast.Or() if isinstance(node.op, ast.And) else ast.And())
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield "compare", index, f"not dropped line {node.lineno}", lambda n: n.operand  # type: ignore[attr-defined]
        if isinstance(node, ast.Constant) and type(node.value) is bool:
            yield "constant", index, f"{node.value} line {node.lineno}", _set(value=not node.value)
        if isinstance(node, ast.Constant) and type(node.value) is int:
            yield "constant", index, f"{node.value}+1 line {node.lineno}", _set(value=node.value + 1)
        if isinstance(node, ast.Call):
            for position, keyword in enumerate(node.keywords):
                if keyword.arg is not None:
                    yield "keyword", index, f"{keyword.arg}= line {node.lineno}", _drop_keyword(position)


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(
        statement.value.value, str)  # fmt: skip


def _set(**fields: Any) -> Callable[[ast.AST], ast.AST]:
    def change(node: ast.AST) -> ast.AST:
        for name, value in fields.items():
            setattr(node, name, value)
        return node

    return change


def _flip(position: int) -> Callable[[ast.AST], ast.AST]:
    def change(node: ast.AST) -> ast.AST:
        node.ops[position] = FLIP[type(node.ops[position])]()  # type: ignore[attr-defined]
        return node

    return change


def _drop_keyword(position: int) -> Callable[[ast.AST], ast.AST]:
    def change(node: ast.AST) -> ast.AST:
        del node.keywords[position]  # type: ignore[attr-defined]
        return node

    return change


def _dropper(field: str, position: int) -> Callable[[ast.AST], ast.AST]:
    def change(node: ast.AST) -> ast.AST:
        block = getattr(node, field)
        block[position] = ast.Pass()
        return node

    return change


def _mutated(tree: ast.AST, index: int, change: Callable[[ast.AST], ast.AST | None]) -> ast.AST:
    """A copy of `tree` with its `index`-th node (ast.walk order) changed."""
    fresh = copy.deepcopy(tree)
    nodes = list(ast.walk(fresh))
    target = nodes[index]
    replacement = change(target)
    if replacement is not target:  # `not x` → `x`: put the operand where the UnaryOp was
        for parent in nodes:
            for field, value in ast.iter_fields(parent):
                if value is target:
                    setattr(parent, field, replacement)
                elif isinstance(value, list):
                    for i, item in enumerate(value):
                        if item is target:
                            value[i] = replacement
    return ast.fix_missing_locations(fresh)


def _without_annotations(tree: ast.AST) -> ast.AST:
    """`tree` with its type annotations removed: they change nothing a check can see."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.returns = None
        if isinstance(node, ast.arg):
            node.annotation = None
    return tree


def mutants(reference: Any, limit: int | None = None) -> list[Mutant]:
    """Every mutant of the function or class `reference` (at most `limit`, spread evenly)."""
    source = textwrap.dedent(inspect.getsource(reference))
    tree = _without_annotations(ast.parse(source))
    defined = [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
    if defined != [reference.__name__]:  # the file changed since it was imported: its lines are another code's
        raise RuntimeError(f"the source of {reference.__name__} is not where Python loaded it from: {defined}")
    module = sys.modules[reference.__module__]
    sites = list(_sites(tree))
    if limit is not None and len(sites) > limit:
        step = len(sites) / limit
        sites = [sites[int(i * step)] for i in range(limit)]
    made = []
    for operator, index, detail, change in sites:
        column = getattr(list(ast.walk(tree))[index], "col_offset", 0)
        key = f"{operator} {detail}:{column}"
        try:
            mutated = _mutated(tree, index, change)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SyntaxWarning)  # `None[:1]`: compiled all the same, it fails when run
                code = compile(mutated, f"<mutant of {reference.__name__}: {key}>", "exec")
        except (SyntaxError, TypeError, ValueError):
            continue  # a change Python cannot compile (a `pass` where an expression belongs): not an answer
        namespace = dict(vars(module))
        exec(code, namespace)  # noqa: S102 — the reference's own source, changed in one place
        made.append(Mutant(key, detail, namespace[reference.__name__]))
    return made


def data_mutants(reference: Any, choices: dict[str, list[Any]] | None = None) -> list[Mutant]:
    """Answers that are data, each with one entry changed: a dict's value swapped for another of
    `choices` (or dropped), a list's item changed, a set with one member added or removed."""
    made = []
    if isinstance(reference, dict):
        for key, value in reference.items():
            for other in (choices or {}).get(key, (choices or {}).get("*", [])):
                if other != value:
                    made.append(Mutant(f"{key}={other!r}", f"{key}: {other!r}", {**reference, key: other}))
            made.append(Mutant(f"drop {key}", f"{key} left out", {k: v for k, v in reference.items() if k != key}))
    elif isinstance(reference, list):
        for position, value in enumerate(reference):
            for other in (choices or {}).get("*", []):
                if other != value:
                    changed = list(reference)
                    changed[position] = other
                    made.append(Mutant(f"[{position}]={other!r}", f"#{position + 1}: {other!r}", changed))
    elif isinstance(reference, set | frozenset):
        for member in sorted(reference):
            made.append(Mutant(f"- {member}", f"{member} left out", set(reference) - {member}))
        for other in (choices or {}).get("*", []):
            if other not in reference:
                made.append(Mutant(f"+ {other}", f"{other} added", set(reference) | {other}))
    return made
