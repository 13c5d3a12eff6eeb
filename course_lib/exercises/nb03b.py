"""Checks for notebook 03b (the reference filesystem server beside ours).

- `check_reference_predictions(predictions)`: four argument sets, four predicted outcomes (a
  number of lines, or "error"); each set really goes to the reference filesystem server (Node,
  over stdio) and the first wrong prediction is explained. Without Node.js the check says so and
  returns False.
- `check_route(fn)`: the learner's `route(alias, exposed) -> (server, tool)` is run on every alias
  of a real host (our files server twice, under `fs` and `fs_archive`, and a gateway server whose
  own tool names already contain "__"), with the host's record in both orders, and on names the
  host never exposed, which must raise `LookupError`. Runs in-process: no Node needed.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`);
the servers' own texts they quote stay as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.shared.exceptions import MCPError

from course_lib import node_tools
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import as_dict, passed_a_call, raised, returned_early, shown, type_name, unassigned
from course_lib.exercises.guard import guard_checks
from course_lib.lang import say

# ---- exercise 1: predict the reference server ---------------------------------------------------

PREDICTION_CASES: dict[str, dict[str, Any]] = {
    "A": {"path": "todo.md", "head": 0},
    "B": {"path": "notes.txt", "tail": 1},
    "C": {"path": "notes.txt", "head": 2, "tail": 0},
    "D": {"path": "/workspace/notes.txt", "head": 2},
}
"""The arguments objects sent, unchanged, to the reference server's `read_text_file`."""

_WHY = {
    "A": "head 0 is falsy, so the reference ignores it and reads the whole file (ours refuses head 0)",
    "B": ("notes.txt ends with a newline and the reference splits on it, so its last 'line' is the empty "
          "text after that newline: tail 1 returns just that (ours returns the last real line)"),
    "C": ("tail 0 is falsy, so the reference never sees 'both head and tail' and applies head 2 alone "
          "(ours refuses tail 0)"),
    "D": ("/workspace is our server's logical root; the reference only knows real paths, so it refuses this "
          "one as outside its allowed directories (ours reads it)"),
}
_WHY_ZH = {
    "A": "head 0 是假值，所以参考服务器忽略它，读取整个文件（我们的拒绝 head 0）",
    "B": "notes.txt 以换行符结尾，参考服务器在换行符处切分，所以它的最后一“行”是那个换行符之后的空文本："
         "tail 1 只返回这个空文本（我们的返回最后一行真正的内容）",
    "C": "tail 0 是假值，所以参考服务器根本看不到“head 和 tail 同时给出”，只应用了 head 2（我们的拒绝 tail 0）",
    "D": "/workspace 是我们服务器的逻辑根目录；参考服务器只认真实路径，所以它把这个路径当作在允许的目录之外而拒绝"
         "（我们的能读取它）",
}


def node_problem() -> str | None:
    """Why the reference server cannot run here, or None when Node.js and the packages are ready."""
    if not node_tools.node_available():
        return say("Node.js is not installed: install `node` and `npm` (Node 20 or newer), then `make node-tools`",
                   "没有安装 Node.js：请安装 `node` 和 `npm`（Node 20 或更新），然后运行 `make node-tools`")
    try:
        node_tools.ensure_installed()
    except node_tools.NodeToolsMissing as missing:
        return str(missing).splitlines()[0]
    return None


def _lines(text: str) -> int:
    """Lines in `text`: a last line counts even without a final newline; empty text has 0."""
    from course_lib.fs_server import count_lines

    return count_lines(text)


def reference_outcomes() -> dict[str, int | str]:
    """Send every PREDICTION_CASES set to the real reference server: {label: lines or "error"}.

    Raises:
        node_tools.NodeToolsMissing: Node.js or the pinned packages are missing.
    """
    from course_lib.host import McpHost
    from course_lib.paths import workspace_dir
    from course_lib.results import result_text

    with McpHost() as host:
        host.add_stdio_server("ref", node_tools.reference_server(workspace_dir()), only={"read_text_file"})
        outcomes: dict[str, int | str] = {}
        for label, arguments in PREDICTION_CASES.items():
            call = host.call("ref__read_text_file", dict(arguments))
            failed_call = call.protocol_error is not None or (call.result is not None and call.result.is_error)
            outcomes[label] = "error" if failed_call else _lines(result_text(call.result))
        return outcomes


def _shown(outcome: int | str) -> str:
    if outcome == "error":
        return say("an error", "一个错误")
    lines = shown(outcome)
    return say(f"{lines} line" if outcome == 1 else f"{lines} lines", f"{lines} 行")


def _prediction(value: Any) -> Any:
    """A prediction as the check reads it: "Error" and " error " say "error" too."""
    return "error" if isinstance(value, str) and value.strip().lower() == "error" else value


def _valid_prediction(value: Any) -> bool:
    return value == "error" if isinstance(value, str) else type(value) is int and value >= 0


def check_reference_predictions(predictions: dict[str, int | str]) -> bool:
    """Compare each prediction with what the reference server really returns for that case."""
    given = as_dict(predictions)
    if not_answered(predictions) or (given is not None and any(v is ... for v in given.values())):
        return failed(say('Not answered yet: replace each ... with a number of lines (0 or more) or "error".',
                          '还没有作答：把每个 ... 换成行数（0 或更多）或 "error"。'))
    if given is None:
        return failed(say('Give a dict {{"A": ..., "B": ..., "C": ..., "D": ...}}; you gave a {kind}.',
                          '请给出一个 dict {{"A": ..., "B": ..., "C": ..., "D": ...}}；你给的是 {kind}。', kind=type_name(predictions)))
    missing = [label for label in PREDICTION_CASES if label not in given]
    if missing:
        return failed(say(f"Predict every case: {', '.join(missing)} missing.",
                          f"请预测每一个例子：缺少 {', '.join(missing)}。"))
    guesses = {label: _prediction(given[label]) for label in PREDICTION_CASES}
    for label in PREDICTION_CASES:
        if not _valid_prediction(guesses[label]):
            hint = say(" (a number, not the text of one)", "（要数字，而不是写成文字的数字）") \
                if isinstance(guesses[label], str) and guesses[label].strip().isdigit() else ""
            return failed(say('{label}: {value} is not a prediction; use a number of lines (0 or more) or the string '
                              '"error"{hint}.',
                              '{label}：{value} 不是一个预测；请用行数（0 或更多）或字符串 "error"{hint}。',
                              label=label, value=shown(given[label]), hint=hint))
    problem = node_problem()
    if problem:
        return failed(say(f"This check runs the reference server, which needs Node.js: {problem}.",
                          f"这个检查要运行参考服务器，需要 Node.js：{problem}。"))
    real = reference_outcomes()
    wrong = [label for label in PREDICTION_CASES if guesses[label] != real[label]]
    if wrong:
        label = wrong[0]
        right, total, case = len(PREDICTION_CASES) - len(wrong), len(PREDICTION_CASES), PREDICTION_CASES[label]
        return failed(say(f"{right} of {total} right. {label} "
                          f"{case}: you predicted {_shown(guesses[label])}, but the reference "
                          f"returned {_shown(real[label])}: {_WHY[label]}.",
                          f"{total} 个中对了 {right} 个。{label} {case}：你预测的是 {_shown(guesses[label])}，"
                          f"但参考服务器返回了 {_shown(real[label])}：{_WHY_ZH[label]}。"))
    return passed(say("all {n} predictions match what the reference server really returned.",
                      "全部 {n} 个预测都与参考服务器真正返回的结果相符。", n=len(PREDICTION_CASES)))


# ---- exercise 2: route an alias back to (server, tool) ------------------------------------------

GATEWAY_TOOLS = ("docs__read_text_file", "docs__list_directory")
"""What the gateway server offers; the exercise host exposes only the first (`only=`)."""

MUST_REFUSE: dict[str, str] = {
    "gw__docs__list_directory": "the gateway offers docs__list_directory, but only= left it out",
    "fs__write_file": "no connected server exposes a write_file",
    "ref__read_text_file": "nothing is connected under the prefix ref in this host",
    "read_text_file": "a bare tool name has no prefix, and the model only ever sees aliases",
    "fs__": "a prefix with no tool name after it",
    "fs_archive__docs__read_text_file": "the archive exposes read_text_file; docs__read_text_file is the gateway's",
}
_MUST_REFUSE_ZH = {
    "gw__docs__list_directory": "网关提供 docs__list_directory，但 only= 把它排除在外",
    "fs__write_file": "没有哪台已连接的服务器暴露 write_file",
    "ref__read_text_file": "这个主机里没有任何东西连接在前缀 ref 之下",
    "read_text_file": "单独的工具名没有前缀，而模型只会看到别名",
    "fs__": "只有前缀，后面没有工具名",
    "fs_archive__docs__read_text_file": "archive 暴露的是 read_text_file；docs__read_text_file 是网关的",
}
"""Names the host never exposed, and why each must be refused before anything is sent."""


def gateway_server() -> Server:
    """A server that bundles others and already namespaces its own tools: `docs__read_text_file`
    (reads a file of the workspace's `docs/` folder) and `docs__list_directory` (its file names)."""
    from course_lib.arguments import ArgumentsError, input_schema, validate_read_args
    from course_lib.fs_server import ToolFailure, Workspace
    from course_lib.paths import workspace_dir

    docs = Workspace(workspace_dir() / "docs")
    tools = [
        types.Tool(name=GATEWAY_TOOLS[0], description="Read a text file of the docs folder (e.g. mcp.md).",
                   input_schema=input_schema()),
        types.Tool(name=GATEWAY_TOOLS[1], description="List the file names of the docs folder.",
                   input_schema={"type": "object", "properties": {}, "additionalProperties": False}),
    ]

    def text_result(text: str, *, is_error: bool = False) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == GATEWAY_TOOLS[1]:
            return text_result("\n".join(sorted(p.name for p in docs.root.iterdir() if p.is_file())))
        if params.name != GATEWAY_TOOLS[0]:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name[:64]}")
        try:
            return text_result(docs.read_text_file(validate_read_args(params.arguments or {})))
        except (ArgumentsError, ToolFailure) as failure:
            return text_result(f"{failure.code}: {failure.message}", is_error=True)

    return Server("gateway", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def routing_host():
    """A real host: our files server under `fs` (the workspace) and `fs_archive` (its `docs/`
    folder), and the gateway under `gw` with only `docs__read_text_file` exposed. Close it after use."""
    from course_lib.fs_server import Workspace, build_server
    from course_lib.host import McpHost
    from course_lib.paths import workspace_dir

    host = McpHost()
    try:
        host.add_server("fs", build_server(Workspace(workspace_dir())))
        host.add_server("fs_archive", build_server(Workspace(workspace_dir() / "docs"), name="archive"))
        host.add_server("gw", gateway_server(), only={GATEWAY_TOOLS[0]})
    except BaseException:
        host.close()
        raise
    return host


def exposed_tools(host=None) -> dict[str, list[str]]:
    """What the app recorded when it connected: {server prefix: [original names of exposed tools]}."""
    if host is None:
        host = routing_host()
        try:
            return exposed_tools(host)
        finally:
            host.close()
    exposed: dict[str, list[str]] = {}
    for route in host.routes.values():
        exposed.setdefault(route.server, []).append(route.tool)
    return exposed


def _what_it_reached(host, server: str, tool: str) -> str:
    """Send the call the learner's route would send, and say what really answered."""
    if server not in host.connections:
        return say(f"no server is connected under {server!r}, so nothing could be sent",
                   f"没有服务器连接在 {server!r} 之下，所以什么也发不出去")
    try:
        result, _ = host.run(host.connections[server].call_tool, tool, {"path": "mcp.md", "head": 1})
    except MCPError as error:
        return say(f"server {server!r} answered with a JSON-RPC error ({error.message})",
                   f"服务器 {server!r} 以一个 JSON-RPC 错误作答（{error.message}）")
    except Exception as error:  # e.g. a tool name that is not a string: refused before sending
        return say(f"the call could not even be sent ({type(error).__name__})",
                   f"这次调用连发送都没能发送（{type(error).__name__}）")
    outcome = say("a tool error", "一个工具错误") if result.is_error else say("a result", "一个结果")
    return say(f"it reached server {server!r}, tool {tool!r}, which returned {outcome}",
               f"它到达了服务器 {server!r} 的工具 {tool!r}，返回了{outcome}")


def _orders(exposed: dict[str, list[str]]) -> list[tuple[str, str, dict[str, list[str]]]]:
    """`exposed` as the host recorded it, then with its servers in reverse order: a route must not
    depend on which prefix it happens to look at first (fs is the start of fs_archive)."""
    return [("", "", exposed),
            (" (with the servers of exposed in reverse order)", "（exposed 里的服务器顺序反过来时）",
             dict(reversed(list(exposed.items()))))]


def check_route(fn: Callable[[str, dict[str, list[str]]], tuple[str, str]]) -> bool:
    """Run `fn(alias, exposed)` on every real alias of `routing_host()` (with `exposed` in both
    orders), then on names it must refuse."""
    if not_answered(fn):
        return failed(unassigned("route", "route(alias, exposed)"))
    if not callable(fn):
        return failed(passed_a_call("route", fn))
    host = routing_host()
    try:
        for when_en, when_zh, exposed in _orders(exposed_tools(host)):
            when = say(when_en, when_zh)
            for alias, real in host.routes.items():
                want = (real.server, real.tool)
                try:
                    got = fn(alias, {k: list(v) for k, v in exposed.items()})
                except Exception as error:
                    return failed(say("route({alias!r}) raised {error}{when}; it should give {want!r}. A tool name may "
                                      "itself contain '__'.",
                                      "route({alias!r}) {when}抛出了 {error}；它应当给出 {want!r}。工具名本身可能包含 '__'。",
                                      alias=alias, error=raised(error), when=when, want=want))
                if not isinstance(got, (tuple, list)) or len(got) != 2:
                    return failed(say("route({alias!r}) must return a (server, tool) pair; it returned {got}.",
                                      "route({alias!r}) 必须返回一个 (server, tool) 对；它返回的是 {got}。",
                                      alias=alias, got=shown(got)) + returned_early(got))
                if not all(isinstance(part, str) for part in got):
                    return failed(say("route({alias!r}) must return two strings (server, tool); it returned {got}.",
                                      "route({alias!r}) 必须返回两个字符串 (server, tool)；它返回的是 {got}。",
                                      alias=alias, got=shown(got)))
                got = (str.__str__(got[0]), str.__str__(got[1]))
                if got != want:
                    sibling = ""
                    if real.server.startswith(f"{got[0]}_"):
                        sibling = say(f" ({real.server!r} merely starts with the characters {got[0]!r}: compare the whole "
                                      "prefix up to the '__', not a string prefix)",
                                      f"（{real.server!r} 只是以字符 {got[0]!r} 开头：要比较直到 '__' 为止的整个前缀，"
                                      "而不是字符串前缀）")
                    reached = _what_it_reached(host, *got)
                    return failed(say("route({alias!r}) gave {got!r}{when}, but the host recorded {want!r}{sibling}; "
                                      "sent as you routed it, {reached}.",
                                      "route({alias!r}) {when}给出的是 {got!r}，但主机记录的是 {want!r}{sibling}；"
                                      "按你的路由发送，{reached}。",
                                      alias=alias, got=got, when=when, want=want, sibling=sibling, reached=reached))
        exposed = exposed_tools(host)
        for alias, why in MUST_REFUSE.items():
            try:
                got = fn(alias, {k: list(v) for k, v in exposed.items()})
            except LookupError:
                continue
            except Exception as error:
                return failed(say("route({alias!r}) raised {error}; raise LookupError (KeyError is one) for a name the "
                                  "host never exposed, so the loop can report an unknown tool.",
                                  "route({alias!r}) 抛出了 {error}；对主机从未暴露过的名字，请抛出 LookupError"
                                  "（KeyError 就是一种），这样循环才能报告未知的工具。", alias=alias, error=raised(error)))
            return failed(say("route({alias!r}) returned {got}, yet the host never exposed that name ({why}): "
                              "raise LookupError so nothing is sent.",
                              "route({alias!r}) 返回了 {got}，可主机从未暴露过这个名字（{why_zh}）："
                              "请抛出 LookupError，这样什么也不会发送。",
                              alias=alias, got=shown(got), why=why, why_zh=_MUST_REFUSE_ZH[alias]))
    finally:
        host.close()
    return passed(say("all {n} aliases routed to the recorded server and tool (whatever order exposed lists the "
                      "servers in), and {refused} names the host never exposed refused.",
                      "全部 {n} 个别名都路由到了记录下的服务器和工具（无论 exposed 以什么顺序列出服务器），"
                      "主机从未暴露过的 {refused} 个名字都被拒绝了。",
                      n=len(host.routes), refused=len(MUST_REFUSE)))


def _route_solution(alias: str, exposed: dict[str, list[str]]) -> tuple[str, str]:
    for server, tools in exposed.items():
        head = f"{server}__"
        if alias.startswith(head) and alias[len(head):] in tools:
            return server, alias[len(head):]
    raise LookupError(f"unknown tool {alias!r}")


SOLUTIONS: Solutions = {
    "check_reference_predictions": lambda: {"A": 8, "B": 0, "C": 2, "D": "error"},
    "check_route": lambda: _route_solution,
}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
