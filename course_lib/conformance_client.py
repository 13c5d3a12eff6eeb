"""The course's host as a command the official MCP conformance suite can start.

    conformance client --command "python -m course_lib.conformance_client" --scenario tools_call

The suite starts a test server for the scenario, appends its URL to the command, and names the
scenario in `MCP_CONFORMANCE_SCENARIO`. This command connects `McpHost` to that URL over
Streamable HTTP (the 2025-11-25 session flow the client scenarios test), lists the tools and,
for every scenario but `initialize`, calls each one with sample arguments built from its `inputSchema` (the
arguments are a value the app makes from a rule; here no model is involved). Each JSON-RPC
exchange is printed as one line of JSON on stdout; the exit status is 0 only if every call
came back without a protocol error.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from course_lib.host import McpHost

_SAMPLES: dict[str, Any] = {"number": 2, "integer": 3, "string": "conformance", "boolean": True,
                            "array": [], "object": {}, "null": None}


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """An arguments object that satisfies the required properties of a simple `inputSchema`."""
    properties = schema.get("properties", {})
    arguments = {}
    for name in schema.get("required", []):
        kind = properties.get(name, {}).get("type", "string")
        kind = kind[0] if isinstance(kind, list) else kind
        enum = properties.get(name, {}).get("enum")
        arguments[name] = enum[0] if enum else _SAMPLES.get(kind, "conformance")
    return arguments


def run(url: str, scenario: str) -> int:
    """Connect to `url`, list tools, and (unless `scenario` is `initialize`) call each; print the exchanges."""
    failures = 0
    with McpHost() as host:
        routes = host.add_http_server("server", url, mode="legacy")
        if scenario != "initialize":  # tools_call, and any scenario that needs a call to happen
            for route in routes:
                call = host.call(route.alias, sample_arguments(route.declaration.input_schema))
                failures += call.protocol_error is not None
        for exchange in host.connections["server"].exchanges():
            print(json.dumps({"request": exchange.request, "response": exchange.response}, ensure_ascii=False))
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> None:
    """`python -m course_lib.conformance_client URL` (the scenario comes from the environment).

    Raises:
        SystemExit: 2 without a URL; otherwise the status of `run`.
    """
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m course_lib.conformance_client URL", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(run(args[0], os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")))


if __name__ == "__main__":
    main()
