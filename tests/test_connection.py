import anyio
import mcp_types
import pytest
from mcp.server import Server
from mcp.shared.exceptions import MCPError

from course_lib.connection import McpConnection


async def _list(ctx, params):
    schema = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
    return mcp_types.ListToolsResult(tools=[mcp_types.Tool(name="echo", description="Echo x", input_schema=schema)])


async def _call(ctx, params):
    if params.name != "echo":
        raise MCPError(-32602, f"Unknown tool: {params.name}")
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=params.arguments["x"])])


SERVER = Server("echo-server", version="1.0", on_list_tools=_list, on_call_tool=_call)


def run(fn):
    return anyio.run(fn)


def test_legacy_mode_records_the_handshake_and_negotiates_2025_11_25():
    async def main():
        async with McpConnection(SERVER) as conn:
            assert conn.protocol_version == "2025-11-25"
            await conn.list_tools()  # a notification gets no reply: the next request shows it went first
            return [m.json.get("method") for m in conn.messages if m.direction == "app→server"]

    assert run(main) == ["initialize", "notifications/initialized", "tools/list"]


def test_call_tool_returns_the_exchange_that_carried_it():
    async def main():
        async with McpConnection(SERVER) as conn:
            await conn.list_tools()
            result, exchange = await conn.call_tool("echo", {"x": "hello"})
            return result, exchange, conn.messages

    result, exchange, messages = run(main)
    assert result.content[0].text == "hello"
    assert exchange.request == {
        "jsonrpc": "2.0", "id": exchange.id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"x": "hello"}},
    }  # fmt: skip
    assert exchange.response["id"] == exchange.id
    assert exchange.response["result"]["content"] == [{"type": "text", "text": "hello"}]
    assert exchange.response["result"]["isError"] is False
    # the recorded text is one JSON line, as a stdio transport would write it
    assert messages[-1].text.startswith('{"jsonrpc":"2.0"')


def test_protocol_error_is_raised_and_still_recorded():
    async def main():
        async with McpConnection(SERVER) as conn:
            with pytest.raises(MCPError) as info:
                await conn.call_tool("missing", {})
            return info.value, conn.last_call()

    error, exchange = run(main)
    assert error.code == -32602
    assert exchange.request["params"]["name"] == "missing"
    assert exchange.response["error"] == {"code": -32602, "message": "Unknown tool: missing"}


def test_auto_mode_speaks_the_2026_protocol_with_meta_on_each_request():
    async def main():
        async with McpConnection(SERVER, mode="auto") as conn:
            await conn.list_tools()
            _, exchange = await conn.call_tool("echo", {"x": "y"})
            return conn.protocol_version, exchange

    version, exchange = run(main)
    assert version == "2026-07-28"
    assert exchange.request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


def test_call_before_list_triggers_an_extra_tools_list():
    async def main():
        async with McpConnection(SERVER) as conn:
            await conn.call_tool("echo", {"x": "1"})
            return [e.request["method"] for e in conn.exchanges()]

    # the client lists after the result arrives, to find the output schema it should check against
    assert run(main) == ["initialize", "tools/call", "tools/list"]


def test_headers_are_only_for_a_url_server():
    async def main():
        async with McpConnection(SERVER, headers={"Authorization": "Bearer x"}):
            pass

    with pytest.raises(ValueError, match="URL server only"):
        run(main)


def test_a_url_server_records_each_http_exchange_with_the_same_json_rpc_messages():
    from course_lib.http_transport import serving

    async def main(url):
        async with McpConnection(url, headers={"Authorization": "Bearer not-checked-here"}) as conn:
            await conn.list_tools()
            result, exchange = await conn.call_tool("echo", {"x": "hi"})
        return conn, result, exchange

    with serving(Server("echo-server", version="1.0", on_list_tools=_list, on_call_tool=_call)) as srv:
        conn, result, exchange = anyio.run(main, srv.url)
    assert result.content[0].text == "hi"
    posts = [h for h in conn.http if h.method == "POST"]
    sent = [m.json for m in conn.messages if m.direction == "app→server"]
    assert [h.request_body for h in posts] == sent  # each POST body is one JSON-RPC message, as sent
    assert all(h.request_headers["authorization"] == "Bearer <redacted>" for h in conn.http)
    assert "not-checked-here" not in repr(conn)
    assert exchange.request["params"] == {"name": "echo", "arguments": {"x": "hi"}}
