"""Checks for notebook 09c (the link in a trace).

- `check_find_links(fn)`: the learner's `find_links(spans)` gets real span trees
  (`fixtures/span_trees.json`, recorded from every framework's traced run by `python -m
  course_lib.frameworks.runs`): the course's host (the `mcp` SDK's client span under the tool span),
  the Agents SDK's, pydantic-ai's (fastmcp's span in between), Mastra's and LangGraph's (the server's
  span only, joined through `_meta.traceparent`), Claude Code's (the server's span told the call id:
  one span holds both); then the same trees with their spans shuffled (order is no clue), and a tree
  whose MCP spans were cut off (no link to find). The expected link is `tracing.tree.links`, which the
  tests hold equal to what each framework's wire says.
- `check_tool_span(fn)`: the learner's `traced_call(tracer, call_id, name, execute)` runs around real
  `tools/call`s of the course's host (offline, in-process) inside a recording; the check reads the
  spans: one `execute_tool {name}` span, INTERNAL, with `gen_ai.operation.name`, `gen_ai.tool.name`
  and `gen_ai.tool.call.id`, the `mcp` SDK's client span under it, and `execute()`'s result returned.
  A failed call (a refused read) must keep its span too.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`).
"""

from __future__ import annotations

import json
import random
from typing import Any

from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import as_dict, passed_a_call, raised, returned_early, same, shown, type_name
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.offline import offline_course
from course_lib.lang import say
from course_lib.paths import fixtures_dir
from course_lib.tracing.records import SpanRecord
from course_lib.tracing.tree import links as _reference_links

# ---- exercise 1: find_links -------------------------------------------------------------------------


def _trees() -> list[tuple[str, list[SpanRecord]]]:
    """(what the tree is, its spans): every recorded framework, then harder versions of them."""
    recorded = json.loads((fixtures_dir() / "span_trees.json").read_text(encoding="utf-8"))
    trees = [(name, [SpanRecord(**span) for span in spans]) for name, spans in recorded.items()]
    shuffled = []
    for name, spans in trees:
        mixed = list(spans)
        random.Random(9).shuffle(mixed)
        shuffled.append((say("{n}, its spans in another order", "{n}，span 换了顺序", n=name), mixed))
    name, spans = trees[0]
    cut = [s for s in spans if s.get("mcp.method.name") != "tools/call"]
    return [*trees, *shuffled, (say("{n}, its MCP spans cut off", "{n}，MCP span 被去掉了", n=name), cut),
            (say("{n}, through a gateway that calls another server", "{n}，经过一个再去调用别的服务器的网关", n=name),
             _through_a_gateway(spans))]


def _through_a_gateway(spans: list[SpanRecord]) -> list[SpanRecord]:
    """The tree with each `tools/call` answered by a gateway, whose own `tools/call` to the server behind
    it (another session, its own JSON-RPC id) sits under the first: the call's link is the nearest."""
    upstream = []
    for number, span in enumerate(s for s in spans if s.get("mcp.method.name") == "tools/call"):
        upstream.append(SpanRecord(
            trace_id=span.trace_id, span_id=f"{0x9a7e000000000000 + number:016x}", parent_id=span.span_id,
            name=span.name, kind="CLIENT", service="gateway", start=span.start + 1, end=span.end - 1,
            attributes={"mcp.method.name": "tools/call", "jsonrpc.request.id": str(41 + number)}))
    return [*spans, *upstream]


def _links_problem(label: str, spans: list[SpanRecord], answer: dict[Any, Any]) -> str | None:
    expected = _reference_links(spans)
    by_id = {s.span_id: s for s in spans}
    if answer == expected:
        return None
    callers = {s.get("gen_ai.tool.call.id") for s in spans if s.get("gen_ai.tool.call.id")}
    extra = [k for k in answer if k not in expected]
    if extra:
        if extra[0] in callers:
            return say("{k} has no tools/call span below its span in this tree ({label}): leave it out, the trace "
                       "does not link it", "在这棵树里（{label}），{k} 的 span 下面没有 tools/call span：不要放进来，这条轨迹没有把它连上",
                       k=shown(extra[0]), label=label)
        return say("{k} is not a gen_ai.tool.call.id of this tree ({label})", "{k} 不是这棵树里的 gen_ai.tool.call.id（{label}）",
                   k=shown(extra[0]), label=label)
    missing = [k for k in expected if k not in answer]
    if missing:
        holder = next(s for s in spans if s.get("gen_ai.tool.call.id") == missing[0])
        if holder.get("mcp.method.name") == "tools/call":
            return say("no link for {k} ({label}): its own span is the tools/call span (the server was told the "
                       "call id): a span that holds both ids links itself",
                       "{k} 没有对应关系（{label}）：它自己的 span 就是 tools/call span（服务器被告知了 call id）：同时带着两个 id 的 span 自己就是对应关系",
                       k=shown(missing[0]), label=label)
        return say("no link for {k} ({label}): its tools/call span is further down, look below every child, not "
                   "only the direct ones", "{k} 没有对应关系（{label}）：它的 tools/call span 在更下面，要往每个子 span 的下面找，不只看直接的子 span",
                   k=shown(missing[0]), label=label)
    for key, want in expected.items():
        got = answer[key]
        if same(got, want):
            continue
        ids = {str(s.get("jsonrpc.request.id")): s for s in spans if s.get("jsonrpc.request.id") is not None}
        holder = ids.get(str(got))
        if holder is not None and holder.get("mcp.method.name") != "tools/call":
            return say("{k} → {v}, the id of a {m} span ({label}): take the tools/call span's",
                       "{k} → {v}，那是 {m} span 的 id（{label}）：要取 tools/call span 的", k=shown(key), v=shown(got),
                       m=holder.get("mcp.method.name"), label=label)
        if holder is not None and _below(holder, want, spans):
            return say("{k} → {v}, a tools/call below the nearest one ({label}): stop at the first tools/call on the way "
                       "down, the one the host sent", "{k} → {v}，这个 tools/call 在最近的那个下面（{label}）：往下走时停在第一个 "
                       "tools/call，那是主机发出的", k=shown(key), v=shown(got), label=label)
        if holder is not None:
            return say("{k} → {v}, a tools/call under another call's span ({label}): walk down from the span that holds "
                       "{k}, and take the nearest", "{k} → {v}，那是别的调用 span 下面的 tools/call（{label}）：从带着 {k} 的 span 往下走，取最近的那个",
                       k=shown(key), v=shown(got), label=label)
        if got in by_id:
            return say("{k} → {v}, a span id ({label}): the link is the jsonrpc.request.id attribute, not the span's id",
                       "{k} → {v}，这是 span 的 id（{label}）：对应关系是 jsonrpc.request.id 属性，不是 span 自己的 id",
                       k=shown(key), v=shown(got), label=label)
        return say("{k} → {v}, but no tools/call span holds that id ({label})", "{k} → {v}，但没有哪个 tools/call span 带着这个 id（{label}）",
                   k=shown(key), v=shown(got), label=label)
    return say("the link is not right ({label})", "对应关系不对（{label}）", label=label)


def _below(span: SpanRecord, jsonrpc_id: Any, spans: list[SpanRecord]) -> bool:
    """Whether `span` has a `tools/call` span carrying `jsonrpc_id` among its ancestors."""
    by_id = {s.span_id: s for s in spans}
    parent = by_id.get(span.parent_id or "")
    while parent is not None:
        if parent.get("mcp.method.name") == "tools/call" and str(parent.get("jsonrpc.request.id")) == str(jsonrpc_id):
            return True
        parent = by_id.get(parent.parent_id or "")
    return False


def check_find_links(fn: Any) -> bool:
    """Check `find_links(spans) -> {call_id: JSON-RPC id}` (see the module docstring)."""
    if not_answered(fn):
        return failed(say("write find_links(spans) and pass the function itself", "编写 find_links(spans)，并传入函数本身"))
    if not callable(fn):
        return failed(passed_a_call("find_links", fn))
    for label, spans in _trees():
        try:
            answer = fn(list(spans))
        except Exception as error:  # the learner's code: report, never crash the cell
            return failed(say("find_links raised {error} on {label}", "find_links 在 {label} 上抛出了 {error}",
                              error=raised(error), label=label))
        if not_answered(answer):
            return failed(say("find_links still returns the starter (...): return a dict {call_id: JSON-RPC id}",
                              "find_links 仍然返回起始代码里的 (...)：返回一个 dict {call_id: JSON-RPC id}"))
        plain = as_dict(answer)
        if plain is None:
            return failed(say("find_links must return a dict {{call_id: JSON-RPC id}}, got {kind}",
                              "find_links 必须返回一个 dict {{call_id: JSON-RPC id}}，得到的是 {kind}", kind=type_name(answer))
                          + returned_early(answer))
        if (problem := _links_problem(label, spans, {k: str(v) if isinstance(v, int) else v for k, v in plain.items()})) is not None:
            return failed(problem)
    return passed(say("every call_id is linked to the tools/call span below it, in every framework's tree and in any order",
                      "每个 call_id 都连上了它下面的 tools/call span，在每个框架的树里、不管顺序如何"))


def find_links(spans: list[SpanRecord]) -> dict[str, str]:
    """Reference solution for exercise 1."""
    children: dict[str | None, list[SpanRecord]] = {}
    for span in spans:
        children.setdefault(span.parent_id, []).append(span)
    found = {}
    for span in spans:
        call_id = span.get("gen_ai.tool.call.id")
        if not call_id:
            continue
        level = [span]
        while level:
            hit = next((s for s in level if s.get("mcp.method.name") == "tools/call" and s.get("jsonrpc.request.id")), None)
            if hit is not None:
                found[call_id] = str(hit.get("jsonrpc.request.id"))
                break
            level = [child for s in level for child in children.get(s.span_id, [])]
    return found


# ---- exercise 2: traced_call ----------------------------------------------------------------------

CALLS = [("call_ex9c_read", {"path": "/workspace/notes.txt", "head": 2}),
         ("call_ex9c_refused", {"path": "/etc/passwd", "head": 2})]  # fmt: skip


def _tool_problem(fn: Any) -> str | None:
    from opentelemetry import trace

    from course_lib.tracing.recorder import recording

    course = offline_course()
    try:
        with recording() as kept:
            tracer = trace.get_tracer("exercise 09c")
            results = []
            for call_id, arguments in CALLS:
                executed = []

                def execute(arguments: dict[str, Any] = arguments) -> Any:
                    executed.append(course.host.call("fs__read_text_file", arguments))
                    return executed[-1]

                try:
                    got = fn(tracer, call_id, "fs__read_text_file", execute)
                except Exception as error:  # the learner's code: report, never crash the cell
                    return say("traced_call raised {error}", "traced_call 抛出了 {error}", error=raised(error))
                if got is ...:
                    return say("traced_call still returns the starter (...): return what execute() returned",
                               "traced_call 仍然返回起始代码里的 (...)：返回 execute() 的返回值")
                if not executed:
                    return say("traced_call never called execute(): the tool must run inside the span",
                               "traced_call 没有调用 execute()：工具必须在 span 里面运行")
                if got is not executed[-1]:
                    return say("traced_call returned {v}, not what execute() returned", "traced_call 返回了 {v}，不是 execute() 的返回值",
                               v=shown(got)) + returned_early(got)
                results.append(got)
        spans = kept.spans
    finally:
        course.close()
    for call_id, _ in CALLS:
        mine = [s for s in spans if s.get("gen_ai.tool.call.id") == call_id]
        if not mine:
            named = [s for s in spans if s.name.startswith("execute_tool")]
            if named:
                return say("the span has no gen_ai.tool.call.id {c}: set it to the call_id you were given",
                           "span 上没有 gen_ai.tool.call.id {c}：把它设成传进来的 call_id", c=call_id)
            return say("no span holds gen_ai.tool.call.id {c}: start one with tracer.start_as_current_span(…)",
                       "没有哪个 span 带着 gen_ai.tool.call.id {c}：用 tracer.start_as_current_span(…) 开一个", c=call_id)
        span = mine[0]
        if span.name != "execute_tool fs__read_text_file":
            return say("the span is named {n}: the conventions name it execute_tool {{gen_ai.tool.name}}",
                       "span 的名字是 {n}：约定把它命名为 execute_tool {{gen_ai.tool.name}}", n=shown(span.name))
        for key, want in (("gen_ai.operation.name", "execute_tool"), ("gen_ai.tool.name", "fs__read_text_file")):
            if span.get(key) != want:
                return say("{k} is {v}, the conventions want {w}", "{k} 是 {v}，约定要求 {w}", k=key, v=shown(span.get(key)), w=want)
        if span.kind != "INTERNAL":
            return say("the span's kind is {k}: a tool execution is INTERNAL (the MCP request under it is the CLIENT)",
                       "span 的 kind 是 {k}：工具执行是 INTERNAL（它下面的 MCP 请求才是 CLIENT）", k=span.kind)
        below = [s for s in spans if s.parent_id == span.span_id and s.get("mcp.method.name") == "tools/call"]
        if not below:
            return say("the MCP span of {c} is not under your span: make your span the current one while execute() runs "
                       "(start_as_current_span, in a with block)",
                       "{c} 的 MCP span 不在你的 span 下面：execute() 运行时要让你的 span 成为当前 span（在 with 块里用 start_as_current_span）",
                       c=call_id)
    return None


def check_tool_span(fn: Any) -> bool:
    """Check `traced_call(tracer, call_id, name, execute)` (see the module docstring)."""
    if not_answered(fn):
        return failed(say("write traced_call(tracer, call_id, name, execute) and pass the function itself",
                          "编写 traced_call(tracer, call_id, name, execute)，并传入函数本身"))
    if not callable(fn):
        return failed(passed_a_call("traced_call", fn))
    if (problem := _tool_problem(fn)) is not None:
        return failed(problem)
    return passed(say("each call has its execute_tool span, named and filled as the conventions say, with the MCP "
                      "request under it, a refused read too",
                      "每个调用都有自己的 execute_tool span，名字和属性符合约定，MCP 请求在它下面，被拒绝的读取也一样"))


def traced_call(tracer: Any, call_id: str, name: str, execute: Any) -> Any:
    """Reference solution for exercise 2."""
    from opentelemetry.trace import SpanKind

    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id}
    with tracer.start_as_current_span(f"execute_tool {name}", kind=SpanKind.INTERNAL, attributes=attributes):
        return execute()


SOLUTIONS: Solutions = {
    "check_find_links": lambda: find_links,
    "check_tool_span": lambda: traced_call,
}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
