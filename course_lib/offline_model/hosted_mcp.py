"""The hosted `mcp` tool: the offline model acts as the platform, and the platform is the MCP client.

A Responses request whose `tools` hold `{"type": "mcp", "server_label": …, "server_url": …}` is
answered as the real API answers it: the platform (here, this model) connects to the server as an
MCP client — the mcp SDK's Streamable HTTP client, through `course_lib.connection.McpConnection` —,
lists its tools and calls them itself. The app sends no `tools/call` and no `function_call_output`;
the output items report what the platform did:

    mcp_list_tools        the server's tools (after `allowed_tools`); not listed again when the input
                          already holds one for that `server_label`, as the real API does
    mcp_approval_request  a call the platform makes only once the app says yes: the next request
                          carries `{"type": "mcp_approval_response", "approval_request_id": …,
                          "approve": true|false}` (with `previous_response_id`, or the items in `input`)
    mcp_call              a call made: `arguments` text, and `output` (the result's text) or `error`
    message               the answer, grounded only in the `mcp_call` outputs

Decisions, and where they come from:

- `require_approval` omitted or null: every call needs approval ("By default, OpenAI will request
  your approval before any data is shared with a connector or remote MCP server", the connectors and
  MCP guide, https://platform.openai.com/docs/guides/tools-connectors-mcp). `"never"`: none does;
  `{"always": filter, "never": filter}`: a tool the `never` filter matches needs none, any other does.
- A filter (`allowed_tools` or an approval filter, the SDK's `McpAllowedToolsMcpToolFilter`) matches
  a tool that meets every criterion it gives: its name is in `tool_names`, and its `readOnlyHint`
  annotation equals `read_only`. (Whether the real API combines the two with "and" is not verified.)
- A server whose tools cannot be listed fails the whole request, as the real API does: HTTP 424,
  `{"message": "Error retrieving tool list from MCP server: 'files'. Http status code: 424 (Failed
  Dependency)", "type": "external_connector_error", "param": "tools", "code": "http_error"}` (seen in
  https://github.com/agentgateway/agentgateway/issues/383 and
  https://github.com/microsoft/agent-framework/issues/1210).
- A call that fails: an `mcp_call` with `status: "failed"` and `error` in one of the SDK's
  `McpToolCallError` shapes: `mcp_tool_execution_error` (the tool ran and returned `isError`: its
  content), `mcp_protocol_error` (a JSON-RPC error: code, message) or `http_error` (the server could
  not be reached any more).
- A denied call is not made: no `mcp_call`; the model is told it was denied and says so.
- Ids are minted from the request without the servers' URLs (`_seed`, then `ids.for_request`), so a
  server on a free port gives the same ids every run; an `mcp_call` is not a `function_call`: a `function_call_output` for its
  id is refused as one that answers no call.
- The offline model reaches only servers on this machine: a `server_url` whose host is not a
  loopback address (127.0.0.1, ::1, localhost), a `connector_id` or a `tunnel_id` is a 400. The
  stand-in (`standin`) is a platform elsewhere, as a real one: it cannot reach them, so every listing
  fails with the 424 above.

Streamed (`stream: true`), the items arrive with the real event types (`streaming.mcp_item_events`).
"""

from __future__ import annotations

import json
import logging
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urlsplit

from course_lib.offline_model import standin
from course_lib.offline_model.plan import _decide
from course_lib.offline_model.reasoning import check_input
from course_lib.offline_model.ids import RequestIds, for_request
from course_lib.offline_model.response_object import _output_item, early_checks, finish, seed_of
from course_lib.offline_model.structured import apply_format, responses_format
from course_lib.offline_model.validation import (
    BadRequest,
    _check_pairs,
    _get,
    _invalid_value,
    _parse_input,
    _parse_tools,
    _tool_policy,
    _type_error,
)

logger = logging.getLogger(__name__)

ITEM_TYPES = ("mcp_list_tools", "mcp_call", "mcp_approval_request", "mcp_approval_response")
MAX_ROUNDS = 8  # calls made in one response before the model must answer (a careful model needs 1–2)
TIMEOUT = 20.0  # seconds for one listing or call, connecting included: a silent server never hangs a request
DENIED = "DENIED: the app did not approve this call (mcp_approval_response with approve: false)"


class ConnectorError(BadRequest):
    """The platform could not list a hosted MCP server's tools: HTTP 424, as the real API answers."""

    status = 424

    def to_body(self) -> dict[str, Any]:
        """The real API's body: type `external_connector_error`, code `http_error`, param `tools`."""
        body = super().to_body()
        body["error"]["type"] = "external_connector_error"
        return body


def has_mcp_tool(body: dict) -> bool:
    """Whether the request declares a hosted `mcp` tool."""
    tools = body.get("tools")
    return isinstance(tools, list) and any(isinstance(tool, dict) and tool.get("type") == "mcp" for tool in tools)


# ---- the request: the mcp tools and the mcp_* input items ---------------------------------------------


@dataclass(frozen=True)
class _Server:
    """One `mcp` tool of the request, checked."""

    label: str
    url: str
    headers: dict[str, str] | None
    allowed: Any  # None (all), a list of names, or a filter object
    approval: Any  # None ("always"), "always", "never", or {"always": filter, "never": filter}

    def allows(self, tool: dict) -> bool:
        return self.allowed is None or _matches(self.allowed, tool)

    def needs_approval(self, tool: dict) -> bool:
        if self.approval in (None, "always"):
            return True
        if self.approval == "never":
            return False
        never, always = self.approval.get("never"), self.approval.get("always")
        return not (never is not None and _matches(never, tool)) or (always is not None and _matches(always, tool))


def _matches(rule: Any, tool: dict) -> bool:
    """A list of names, or a filter `{"tool_names": […], "read_only": bool}` (every criterion given)."""
    if isinstance(rule, list):
        return tool["name"] in rule
    names, read_only = rule.get("tool_names"), rule.get("read_only")
    hint = (tool.get("annotations") or {}).get("readOnlyHint") is True
    return (names is None or tool["name"] in names) and (read_only is None or hint == read_only)


def _filter(value: Any, where: str, names_only: bool = False) -> Any:
    """Check an `allowed_tools` value or an approval filter.

    Raises:
        BadRequest: not a list of strings or an object of `tool_names` (strings) and `read_only` (boolean).
    """
    if value is None:
        return None
    if isinstance(value, list) and not names_only:
        for i, name in enumerate(value):
            if not isinstance(name, str):
                raise _type_error(f"{where}[{i}]", str, name)
        return value
    if not isinstance(value, dict):
        raise _type_error(where, dict if names_only else (list, dict), value)
    for key in value:
        if key not in ("tool_names", "read_only"):
            raise BadRequest(f"Unknown parameter: '{where}.{key}'.", f"{where}.{key}", "unknown_parameter")
    names = _get(value, "tool_names", where, list, optional=True)
    for i, name in enumerate(names or []):
        if not isinstance(name, str):
            raise _type_error(f"{where}.tool_names[{i}]", str, name)
    _get(value, "read_only", where, bool, optional=True)
    return value


def _loopback_url(url: str, where: str) -> str:
    """`url` if it is an http(s) URL on this machine.

    Raises:
        BadRequest: another scheme or host (the offline model never leaves the machine).
    """
    from course_lib.http_transport import is_loopback  # here: it imports uvicorn

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        parts, host = None, ""
    if parts is None or parts.scheme not in ("http", "https") or not is_loopback(host):
        raise BadRequest(f"Invalid '{where}': '{url}'. The offline model only reaches MCP servers on this machine: "
                         "a loopback http(s) URL such as http://127.0.0.1:8765/mcp (127.0.0.1, ::1 or localhost). "
                         "Serve the server locally (course_lib.http_transport.serving) and pass its URL.",
                         where, "invalid_value")
    return url


def _servers(body: dict) -> dict[str, _Server]:
    """The request's `mcp` tools by `server_label`, checked.

    Raises:
        BadRequest: a missing or mistyped field, a `server_label` used twice, no `server_url`, a
            `connector_id` or `tunnel_id`, or a URL that is not on this machine.
    """
    servers: dict[str, _Server] = {}
    for i, tool in enumerate(body["tools"]):
        where = f"tools[{i}]"
        if not isinstance(tool, dict) or tool.get("type") != "mcp":
            continue
        label = _get(tool, "server_label", where, str)
        if label in servers:
            raise BadRequest(f"Duplicate server_label '{label}' in 'tools'.", f"{where}.server_label")
        for remote in ("connector_id", "tunnel_id"):
            if tool.get(remote) is not None:
                raise BadRequest(f"The offline model cannot reach '{where}.{remote}': it only reaches MCP servers "
                                 "on this machine, by a loopback server_url.", f"{where}.{remote}", "invalid_value")
        url = _loopback_url(_get(tool, "server_url", where, str), f"{where}.server_url")
        headers = _get(tool, "headers", where, dict, optional=True)
        token = _get(tool, "authorization", where, str, optional=True)
        if token is not None:
            headers = {**(headers or {}), "Authorization": f"Bearer {token}"}
        approval = tool.get("require_approval")
        if isinstance(approval, str) and approval not in ("always", "never"):
            raise _invalid_value(approval, f"{where}.require_approval", ["always", "never"])
        if isinstance(approval, dict):
            for key in approval:
                if key not in ("always", "never"):
                    raise BadRequest(f"Unknown parameter: '{where}.require_approval.{key}'.",
                                     f"{where}.require_approval.{key}", "unknown_parameter")
                _filter(approval[key], f"{where}.require_approval.{key}", names_only=True)
        elif approval is not None and not isinstance(approval, str):
            raise _type_error(f"{where}.require_approval", (str, dict), approval)
        servers[label] = _Server(label, url, headers, _filter(tool.get("allowed_tools"), f"{where}.allowed_tools"),
                                 approval)
    return servers


def parse_item(item: dict, where: str, kind: str) -> dict | None:
    """One mcp_* input item, checked (the hook `validation._parse_input` calls); None for other types.

    Raises:
        BadRequest: a missing field or a field of the wrong JSON type.
    """
    if kind not in ITEM_TYPES:
        return None
    if kind == "mcp_approval_response":
        return {"kind": kind, "approval_request_id": _get(item, "approval_request_id", where, str),
                "approve": _get(item, "approve", where, bool),
                "reason": _get(item, "reason", where, str, optional=True)}
    parsed = {"kind": kind, "id": _get(item, "id", where, str), "server_label": _get(item, "server_label", where, str)}
    if kind == "mcp_list_tools":
        tools = _get(item, "tools", where, list)
        for i, tool in enumerate(tools):
            if not isinstance(tool, dict):
                raise _type_error(f"{where}.tools[{i}]", dict, tool)
            _get(tool, "name", f"{where}.tools[{i}]", str)
            _get(tool, "input_schema", f"{where}.tools[{i}]", dict)
        return {**parsed, "tools": tools, "error": _get(item, "error", where, str, optional=True)}
    parsed |= {"name": _get(item, "name", where, str), "arguments": _get(item, "arguments", where, str)}
    if kind == "mcp_call":
        parsed |= {"output": _get(item, "output", where, str, optional=True), "error": item.get("error"),
                   "approval_request_id": _get(item, "approval_request_id", where, str, optional=True)}
    return parsed


# ---- the platform: an MCP client per server --------------------------------------------------------


class _Platform:
    """The platform's MCP client side: for each listing or call, a fresh `McpConnection` (the SDK's
    Streamable HTTP client) to the server, on an event loop of its own in a worker thread (safe
    inside a notebook's running loop), the whole exchange bounded by TIMEOUT seconds."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        self._portal: Any = None

    def _run(self, server: _Server, use: Callable[[Any], Any]) -> Any:
        """`await use(connection)` on a new connection to `server`, within TIMEOUT seconds.

        Raises:
            TimeoutError: the server did not answer in time.
            Exception: whatever connecting or `use` raised (MCPError, httpx2 errors, …).
        """
        import anyio
        from anyio.from_thread import start_blocking_portal
        from mcp.shared.exceptions import MCPError

        from course_lib.connection import McpConnection

        async def session() -> Any:
            with anyio.fail_after(TIMEOUT):
                async with McpConnection(server.url, name=server.label, headers=server.headers) as connection:
                    try:
                        return await use(connection), None
                    except MCPError as error:  # kept here: through the client's task group it would arrive
                        return None, error  # wrapped in an ExceptionGroup

        if self._portal is None:
            self._portal = self._stack.enter_context(start_blocking_portal())
        result, error = self._portal.call(session)
        if error is not None:
            raise error
        return result

    def list_tools(self, server: _Server) -> list[dict]:
        """The server's `tools/list`, as mcp_list_tools entries.

        Raises:
            ConnectorError: the server cannot be reached, refused the listing or did not answer in time.
        """
        try:
            if standin.active():  # a real platform cannot reach a server on the learner's machine
                raise ConnectionError(f"{server.url} is on this machine, out of a platform's reach")
            tools = self._run(server, lambda connection: connection.list_tools())
        except Exception as error:  # refused, gone, a 401, a JSON-RPC error, a timeout: one 424 for the app
            logger.info("hosted MCP: listing %s failed: %r", server.url, error)
            raise ConnectorError(f"Error retrieving tool list from MCP server: '{server.label}'. Http status code: "
                                 "424 (Failed Dependency)", "tools", "http_error") from None
        return [_listed(tool) for tool in tools]

    def call(self, server: _Server, name: str, arguments: dict) -> tuple[str | None, dict | None]:
        """`tools/call`: (output text, None) on success, (None, error) in the SDK's McpToolCallError shapes."""
        from mcp.shared.exceptions import MCPError

        try:
            result, _ = self._run(server, lambda connection: connection.call_tool(name, arguments))
        except MCPError as error:
            return None, {"type": "mcp_protocol_error", "code": error.error.code, "message": error.error.message}
        except Exception as error:  # gone, refused, a timeout
            logger.info("hosted MCP: calling %s on %s failed: %r", name, server.url, error)
            late = isinstance(error, TimeoutError)
            return None, {"type": "http_error", "code": 504 if late else 424,
                          "message": f"Error calling tool '{name}' on MCP server '{server.label}': the server "
                                     + ("did not answer in time." if late else "could not be reached.")}  # fmt: skip
        content = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]
        if result.is_error:
            return None, {"type": "mcp_tool_execution_error", "content": content}
        return "\n".join(block.get("text", "") for block in content if block.get("type") == "text"), None

    def close(self) -> None:
        self._stack.close()


def _listed(tool: Any) -> dict:
    """An mcp `Tool` as an mcp_list_tools entry (`input_schema`, the server's own annotations)."""
    entry = {"name": tool.name, "input_schema": tool.input_schema, "description": tool.description}
    annotations = None
    if tool.annotations is not None:
        annotations = tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True)
    return entry | {"annotations": annotations}


# ---- the response ----------------------------------------------------------------------------------


def _error_text(error: Any) -> str:
    """What the model reads of a failed call: the tool's own error text, or the protocol/HTTP message."""
    if isinstance(error, dict) and error.get("type") == "mcp_tool_execution_error":
        content = error.get("content") if isinstance(error.get("content"), list) else []
        text = "\n".join(block.get("text", "") for block in content if isinstance(block, dict))
        return text or "Error: the tool failed without a message"
    if isinstance(error, dict):
        return f"Error: {error.get('message', 'the call failed')}"
    return f"Error: {error}"


def _seen(call: dict, output: str) -> list[dict]:
    """A made call as the planner reads it: a call and its output, tied by the mcp_call's id."""
    return [{"kind": "call", "call_id": call["id"], "name": call["name"], "arguments": call["arguments"], "id": None},
            {"kind": "output", "call_id": call["id"], "text": output}]


class _Turn:
    """One response being built: its output items, and what the planner has seen so far."""

    def __init__(self, ids: RequestIds, platform: _Platform, servers: dict[str, _Server]) -> None:
        self.ids, self.platform, self.servers = ids, platform, servers
        self.output: list[dict] = []

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{self.ids.mint(f'{prefix}{len(self.output)}', 24)}"

    def list_tools(self, server: _Server) -> list[dict]:
        tools = [tool for tool in self.platform.list_tools(server) if server.allows(tool)]
        self.output.append({"id": self._id("mcpl"), "type": "mcp_list_tools", "server_label": server.label,
                            "tools": tools, "error": None})
        return tools

    def call(self, server: _Server, name: str, arguments: str, approval_id: str | None = None) -> list[dict]:
        """Make the call; its mcp_call item goes into the output; returns what the planner sees."""
        output, error = self.platform.call(server, name, json.loads(arguments))
        item = {"id": self._id("mcp"), "type": "mcp_call", "server_label": server.label, "name": name,
                "arguments": arguments, "approval_request_id": approval_id, "error": error, "output": output,
                "status": "failed" if error else "completed"}  # fmt: skip
        self.output.append(item)
        return _seen(item, _error_text(error) if error else output or "")

    def ask(self, server: _Server, name: str, arguments: str) -> None:
        self.output.append({"id": self._id("mcpr"), "type": "mcp_approval_request", "server_label": server.label,
                            "name": name, "arguments": arguments})


def _seed(body: dict) -> str:
    """`response.seed_of`, without the servers' URLs: a server on a free port (a notebook, a test) gets
    the same ids and usage every run; the `server_label` names the server."""
    tools = [{key: value for key, value in tool.items() if key != "server_url"}
             if isinstance(tool, dict) and tool.get("type") == "mcp" else tool for tool in body["tools"]]  # fmt: skip
    return seed_of({**body, "tools": tools})


def _declaration(tool: dict) -> dict:
    """A listed tool as the planner reads a declaration (non-strict: only the arguments it fills)."""
    return {"type": "function", "name": tool["name"], "description": tool.get("description") or "",
            "parameters": tool["input_schema"], "strict": False}


def respond(body: dict) -> dict:
    """Answer a Responses body that declares hosted `mcp` tools, acting as the platform (see the module
    docstring); `response.respond` has checked the top-level parameters.

    Raises:
        BadRequest: a malformed tool or item, a URL off this machine, an `mcp_approval_response` that
            answers no approval request in the input.
        ConnectorError: a server's tools cannot be listed (424).
    """
    chained, parallel, persona = early_checks(body)
    servers = _servers(body)
    items = _parse_input(body, parse_item)  # alone first, so a 400 names this request's own input[i]
    if chained is not body["input"]:
        items = _parse_input({**body, "input": chained}, parse_item)
    functions = _parse_tools(body)
    _check_pairs([item for item in items if not item["kind"].startswith("mcp_")])  # an mcp_call is no function_call
    platform = _Platform()
    turn = _Turn(for_request(_seed(body)), platform, servers)
    try:
        listed = {item["server_label"]: item["tools"] for item in items
                  if item["kind"] == "mcp_list_tools" and not item["error"]}  # fmt: skip
        hosted: dict[str, tuple[_Server, dict]] = {}
        for server in servers.values():
            tools = listed[server.label] if server.label in listed else turn.list_tools(server)
            for tool in tools:
                if server.allows(tool):
                    hosted.setdefault(tool["name"], (server, tool))
        declared = functions + [_declaration(tool) for _, tool in hosted.values()
                                if tool["name"] not in {f["name"] for f in functions}]  # fmt: skip
        mode, allowed = _tool_policy(body, declared)
        seen = check_input(_replay(items, servers, turn))
        _plan_and_act(body, seen, mode, allowed, parallel is not False, persona, hosted, turn)
    finally:
        platform.close()
    return finish(body, chained, turn.ids, turn.output)


def _replay(items: list[dict], servers: dict[str, _Server], turn: _Turn) -> list[dict]:
    """The input as the planner reads it: mcp_call items become a call and its output; an answered
    approval request is made (approved) or reported as denied, here and now.

    Raises:
        BadRequest: an `mcp_approval_response` whose `approval_request_id` names no request in the input.
    """
    requests = {item["id"]: item for item in items if item["kind"] == "mcp_approval_request"}
    made = {item["approval_request_id"] for item in items if item["kind"] == "mcp_call"}
    seen: list[dict] = []
    for item in items:
        if item["kind"] == "mcp_call":
            seen += _seen(item, item["output"] or "" if item["error"] is None else _error_text(item["error"]))
        elif item["kind"] == "mcp_approval_response":
            request = requests.get(item["approval_request_id"])
            if request is None:
                raise BadRequest(f"No approval request found with id '{item['approval_request_id']}'.", "input")
            server = servers.get(request["server_label"])
            if request["id"] in made or server is None:
                continue  # already made (its mcp_call is in the input), or its server is not declared now
            if item["approve"]:
                seen += turn.call(server, request["name"], request["arguments"], request["id"])
            else:
                seen += _seen(request, DENIED)
        elif not item["kind"].startswith("mcp_"):
            seen.append(item)
    return seen


def _plan_and_act(body: dict, seen: list[dict], mode: str, tools: list[dict], parallel: bool, persona: str,
                  hosted: dict[str, tuple[_Server, dict]], turn: _Turn) -> None:  # fmt: skip
    """The platform's loop: the model plans; a hosted call is made (or its approval asked) at once and
    the model plans again with its output; the turn ends with an answer, an approval request or a
    function call for the app."""
    for _ in range(MAX_ROUNDS):
        plan = apply_format(_decide(seen, mode, tools, parallel, persona), seen, responses_format(body))
        waiting = False
        for step in plan:
            if step[0] == "message" or step[1] not in hosted:
                turn.output.append(_output_item(step, turn.ids, len(turn.output)))
                waiting = waiting or step[0] == "call"  # a function call: the app's to execute
                continue
            server, tool = hosted[step[1]]
            arguments = json.dumps(step[2], separators=(",", ":"), ensure_ascii=False)
            if server.needs_approval(tool):
                turn.ask(server, step[1], arguments)
                waiting = True
            else:
                seen = seen + turn.call(server, step[1], arguments)
        if waiting or all(step[0] == "message" for step in plan):
            return
        mode = "auto" if mode == "required" else mode  # obliged to call once, not forever
    turn.output.append(_output_item(("message", "I stopped after too many tool calls in one response."),
                                    turn.ids, len(turn.output)))
