"""What a run recorded, gathered from whichever record the learner holds, in one shape.

A sequence diagram needs three things, and the course keeps each of them somewhere:

- the model's side: each HTTP exchange with the model (`wire.HttpCapture`, a framework's
  `HttpTap`), or, when nothing captured the HTTP bodies, the loop's own record of what it sent
  (`context`) and the typed responses it received;
- each MCP server's side: the JSON-RPC messages in the order they crossed (`McpConnection.messages`);
- what the app knows and neither wire says: which `call_id` a `tools/call` carried (the loop's
  trace), which call it refused before sending anything, which write waited for a person.

`gather(*records)` turns any of the course's records into a `Recording`. Nothing is typed by hand:
every arrow drawn later is one item of these lists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

ENVELOPES = {"/responses": "responses", "/chat/completions": "chat", "/messages": "messages"}


@dataclass(frozen=True)
class ModelExchange:
    """One request to the model and its answer, as JSON bodies (`response` None: no answer recorded)."""

    envelope: str  # "responses", "chat" or "messages"
    request: dict[str, Any]
    response: dict[str, Any] | None
    status: int = 200
    events: int = 0  # a streamed answer: how many events carried it
    at: float | None = None  # when it was sent (time.monotonic), if recorded live


@dataclass(frozen=True)
class ServerMessage:
    """One JSON-RPC message between the app and the server named `server`."""

    server: str
    outgoing: bool  # app → server
    json: dict[str, Any]
    at: float | None = None


@dataclass(frozen=True)
class Link:
    """The app's link from a model call to what it did with it: the JSON-RPC id that carried it
    (`mcp_id`, on `server`), or the code it was refused with before anything was sent."""

    call_id: str
    server: str | None = None
    mcp_id: Any = None
    refused: str | None = None  # an error code when no tools/call was sent
    tool: str | None = None  # the server's tool name and the arguments object, when the app recorded them
    arguments: Any = None

    def carried_by(self, message: ServerMessage) -> bool:
        """`message` is the tools/call request of this link: same server and id, and (where the app
        recorded them) the same tool and arguments, so a look-alike id on another host is not taken."""
        params = message.json.get("params") or {}
        return (message.outgoing and message.server == self.server and message.json.get("id") == self.mcp_id
                and message.json.get("method") == "tools/call"
                and (self.tool is None or params.get("name") == self.tool)
                and (self.arguments is None or _within(self.arguments, params.get("arguments"))))  # fmt: skip


@dataclass(frozen=True)
class Approval:
    """A call that stopped for a person: its tool and action id, and the decision, if one was made."""

    call_id: str
    tool: str
    action_id: str
    decision: str | None  # "approved", "rejected", or None: still waiting


@dataclass
class Recording:
    """Everything a sequence diagram is drawn from."""

    model: list[ModelExchange] = field(default_factory=list)
    servers: dict[str, list[ServerMessage]] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    approvals: list[Approval] = field(default_factory=list)
    routes: dict[str, tuple[str, str]] = field(default_factory=dict)  # model-side name → (server, tool)
    app: str | None = None  # who the app is, when it is not the course's own (a framework's label)

    @property
    def messages(self) -> list[ServerMessage]:
        return [m for messages in self.servers.values() for m in messages]

    @property
    def timed(self) -> bool:
        """Every exchange and message carries the time it crossed (recorded live, in this process)."""
        return all(x.at is not None for x in [*self.model, *self.messages])


class NotARecord(TypeError):
    """`pictures.sequence` was given something the course does not record a run in."""


def gather(*records: Any) -> Recording:
    """A `Recording` from the course's records: a `Course` (everything it recorded so far); a loop's
    result (`run_loop`, `run_guarded_loop`, `run_chat_loop`, `run_messages_loop`) with the `Course`,
    `McpHost` or `NotesAssistant` whose wires it ran on; a framework's `Run` (09b); an `McpHost`,
    `McpConnection`, one `Exchange` or a `ToolCall` (the MCP side alone).

    Raises:
        NotARecord: nothing given, or something that is none of these.
    """
    if not records:
        raise NotARecord("give pictures.sequence a record of a run: course, a loop's result and course, a framework's Run…")
    results = [r for r in records if _is_result(r)]
    places = [r for r in records if not _is_result(r)]
    recording = Recording()
    for place in places:
        _add_place(recording, place)
    if len(results) > 1:
        raise NotARecord("one run at a time: pass one loop result (and where it ran)")
    if results:
        _narrow_to(recording, results[0])
    elif not places:
        raise NotARecord(f"{type(records[0]).__name__} is not a record of a run")
    if not recording.links:
        recording.links = _inferred_links(recording)
    return recording


# ---- places: where the wires were recorded -------------------------------------------------------


def _is_result(record: Any) -> bool:
    return hasattr(record, "trace") and (hasattr(record, "responses") or hasattr(record, "completions")
                                         or hasattr(record, "messages_out"))  # fmt: skip


def _add_place(recording: Recording, place: Any) -> None:
    if hasattr(place, "wire") and hasattr(place, "host"):  # course.Course
        recording.model += [m for e in place.wire.exchanges if (m := model_exchange(e)) is not None]
        _add_host(recording, place.host)
    elif hasattr(place, "host") and hasattr(place, "executor"):  # assistant.NotesAssistant
        _add_host(recording, place.host)
    elif hasattr(place, "connections") and hasattr(place, "routes"):  # host.McpHost
        _add_host(recording, place)
    elif hasattr(place, "label") and hasattr(place, "model") and hasattr(place, "mcp"):  # frameworks.Run
        recording.model += [m for e in place.model if (m := model_exchange(e, timed=False)) is not None]
        name = _server_name(place.mcp)
        recording.servers[name] = [ServerMessage(name, m.direction == "app→server", m.json)
                                   for m in place.mcp if isinstance(m.json, dict)]  # fmt: skip
        recording.links = _framework_links(place, name)
        recording.app = place.label
    elif hasattr(place, "messages") and hasattr(place, "exchanges") and hasattr(place, "server"):  # McpConnection
        _add_connection(recording, place.name, place)
    elif hasattr(place, "exchange") and hasattr(place, "route"):  # host.ToolCall
        _add_exchange(recording, place.route.server, place.exchange)
    elif hasattr(place, "request") and hasattr(place, "response") and hasattr(place, "id"):  # connection.Exchange
        _add_exchange(recording, "server", place)
    elif hasattr(place, "exchanges") and hasattr(place, "inner"):  # wire.HttpCapture
        recording.model += [m for e in place.exchanges if (m := model_exchange(e)) is not None]
    else:
        raise NotARecord(f"{type(place).__name__} is not a record of a run")


def _add_host(recording: Recording, host: Any) -> None:
    for name, connection in host.connections.items():
        _add_connection(recording, name, connection)
    recording.routes.update({alias: (route.server, route.tool) for alias, route in host.routes.items()})


def _add_connection(recording: Recording, name: str, connection: Any) -> None:
    recording.servers[name] = [ServerMessage(name, m.direction == "app→server", m.json, getattr(m, "at", None))
                               for m in connection.messages]  # fmt: skip


def _add_exchange(recording: Recording, name: str, exchange: Any) -> None:
    messages = [ServerMessage(name, True, exchange.request)]
    if exchange.response is not None:
        messages.append(ServerMessage(name, False, exchange.response))
    recording.servers.setdefault(name, []).extend(messages)


def model_exchange(exchange: Any, *, timed: bool = True) -> ModelExchange | None:
    """A `ModelExchange` from a recorded HTTP exchange (`wire.HttpExchange`), or None when it is not
    a request for a model's answer (a `GET /v1/models`, a token count). A streamed answer (the event
    stream as text) is read back into the final body it carried."""
    path = exchange.path.rstrip("/")
    envelope = next((name for end, name in ENVELOPES.items() if path.endswith(end)), None)
    if envelope is None or exchange.method != "POST" or not isinstance(exchange.request, dict):
        return None
    response, events = exchange.response, 0
    if isinstance(response, str):
        response, events = _from_stream(envelope, response)
    return ModelExchange(envelope, exchange.request, response if isinstance(response, dict) else None,
                         exchange.status, events, getattr(exchange, "at", None) if timed else None)  # fmt: skip


def stream_events(text: str) -> list[dict[str, Any]]:
    """The JSON of each `data:` line of an event stream (lines that are not JSON are skipped)."""
    values = []
    for line in text.splitlines():
        if line.startswith("data:"):
            try:
                values.append(json.loads(line[5:]))
            except ValueError:
                continue
    return [v for v in values if isinstance(v, dict)]


def _from_stream(envelope: str, text: str) -> tuple[dict[str, Any] | None, int]:
    events = stream_events(text)
    if envelope == "responses":
        final = next((e.get("response") for e in reversed(events)
                      if e.get("type") in ("response.completed", "response.incomplete", "response.failed")), None)  # fmt: skip
        return final, len(events)
    if envelope == "chat":  # the calls' ids and names come whole in their first delta
        calls: dict[int, dict[str, Any]] = {}
        content = ""
        for chunk in events:
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                content += delta.get("content") or ""
                for part in delta.get("tool_calls") or []:
                    call = calls.setdefault(part.get("index", 0), {"id": None, "function": {"name": None}})
                    call["id"] = call["id"] or part.get("id")
                    call["function"]["name"] = call["function"]["name"] or (part.get("function") or {}).get("name")
        message = {"role": "assistant", "content": content or None, "tool_calls": [calls[i] for i in sorted(calls)]}
        return {"choices": [{"message": message}]}, len(events)
    blocks = [e.get("content_block") for e in events if e.get("type") == "content_block_start"]
    return {"content": [b for b in blocks if isinstance(b, dict)]}, len(events)


# ---- a loop's result: its own exchanges, links and approvals --------------------------------------


def _narrow_to(recording: Recording, result: Any) -> None:
    """Keep only what belongs to `result`'s run; take its links and approvals from its own record."""
    ids = _response_ids(result)
    if recording.model:
        mine = [m for m in recording.model if m.response is not None and m.response.get("id") in ids]
        recording.model = mine or _typed_exchanges(result)
    else:
        recording.model = _typed_exchanges(result)
    recording.links = [Link(t.call_id, t.server, t.mcp_id, None if t.mcp_id is not None else t.error_code, t.tool,
                            t.arguments) for t in result.trace]  # fmt: skip
    recording.approvals = _approvals(result)
    carried = [link for link in recording.links if link.mcp_id is not None]
    for name, messages in recording.servers.items():
        sent = [i for i, m in enumerate(messages) if any(link.carried_by(m) for link in carried)]
        ids = {messages[i].json.get("id") for i in sent}
        answered = [i for i, m in enumerate(messages) if not m.outgoing and m.json.get("id") in ids and i > sent[0]]
        # This run's messages: from its first tools/call to the answer of its last (and whatever
        # crossed in between, e.g. a tools/list the client sent on its own).
        recording.servers[name] = messages[sent[0]:max(sent + answered) + 1] if sent else []
    if not recording.timed:  # typed responses carry no time: order both sides by cause alone
        recording.servers = {name: [ServerMessage(m.server, m.outgoing, m.json) for m in messages]
                             for name, messages in recording.servers.items()}  # fmt: skip


def _response_ids(result: Any) -> set[str]:
    answers = getattr(result, "responses", None) or getattr(result, "completions", None) or getattr(result, "messages_out", [])
    return {answer.id for answer in answers}


def _typed_exchanges(result: Any) -> list[ModelExchange]:
    """The model side from the loop's own record, when no HTTP capture holds it: each typed answer
    as JSON, each request as the messages the loop had sent by then (`context` / `messages`)."""
    if hasattr(result, "responses"):
        answers, sent, envelope, key = result.responses, result.context, "responses", "input"
        produced = [[item.to_dict() for item in answer.output] for answer in answers]
    elif hasattr(result, "completions"):
        answers, sent, envelope, key = result.completions, result.messages, "chat", "messages"
        produced = [[answer.choices[0].message.model_dump(exclude_none=True, exclude={"annotations"})] for answer in answers]
    else:
        answers, sent, envelope, key = result.messages_out, result.messages, "messages", "messages"
        produced = [[{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]}]
                    for answer in answers]  # fmt: skip
    exchanges, start = [], 0
    for answer, items in zip(answers, produced):
        end = _position(sent, items, start)
        exchanges.append(ModelExchange(envelope, {key: sent[:end]}, answer.to_dict() if hasattr(answer, "to_dict")
                                       else answer.model_dump(mode="json")))  # fmt: skip
        start = end + len(items)
    return exchanges


def _position(sent: list[Any], items: list[Any], start: int) -> int:
    """Where the answer's `items` were appended to what the loop sent (the end, if they never were)."""
    if items:
        for i in range(start, len(sent)):
            if _same_item(sent[i], items[0]):
                return i
    return len(sent)


def _same_item(a: Any, b: Any) -> bool:
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return False
    if a.get("id") is not None or b.get("id") is not None:
        return a.get("id") == b.get("id") and a.get("type") == b.get("type")
    return a == b


def _approvals(result: Any) -> list[Approval]:
    """The calls of a guarded run that stopped for a person, read from its executions' steps: a
    write that ran had a person's approval (its approval step passed); a refusal after the approval
    step is a person's "no"; one still in `pending` waits."""
    found = []
    for execution in [*getattr(result, "executions", []), *getattr(result, "pending", [])]:
        steps = {step.name: step.outcome for step in execution.steps}
        if "approval" not in steps:
            continue
        error = execution.result.get("error") or {}
        if steps["approval"] == "ok":
            decision = "approved"
        elif steps.get("decision") == "FORBIDDEN":
            decision = "rejected"
        else:
            decision = None
        action = error.get("action_id") or (execution.notes or {}).get("action_id") or ""
        found.append(Approval(execution.call_id, execution.tool, action, decision))
    return found


# ---- links the app did not record: read from the wire ---------------------------------------------


def _server_name(messages: list[Any]) -> str:
    """The server's own name, as its `initialize` result gives it (`serverInfo.name`), else "files"."""
    for message in messages:
        info = ((message.json.get("result") or {}) if isinstance(message.json.get("result"), dict) else {}).get("serverInfo")
        if isinstance(info, dict) and info.get("name"):
            return str(info["name"])
    return "files"


def _framework_links(run: Any, server: str) -> list[Link]:
    from course_lib.frameworks.trace import calls  # a framework keeps the link to itself: read it off the wires

    return [Link(t.call_id, server, t.mcp_id) for t in calls(run) if t.mcp_id is not None]


def _inferred_links(recording: Recording) -> list[Link]:
    """Each model call paired with the next unused `tools/call` with the same arguments and a tool
    name that is the call's own name or its end (`fs__read_text_file` → `read_text_file`)."""
    links, used = [], set()
    carried = [m for m in recording.messages if m.outgoing and m.json.get("method") == "tools/call"]
    for exchange in recording.model:
        for call_id, name, arguments in model_calls(exchange):
            route = recording.routes.get(name)
            for i, message in enumerate(carried):
                params = message.json.get("params") or {}
                tool = str(params.get("name"))
                named = (route == (message.server, tool)) if route else (name == tool or name.endswith("_" + tool))
                if i not in used and named and _without_nulls(params.get("arguments")) == _without_nulls(arguments):
                    used.add(i)
                    links.append(Link(call_id, message.server, message.json.get("id")))
                    break
    return links


def _within(given: Any, sent: Any) -> bool:
    """Every non-null argument in `given` was sent with the same value."""
    if not isinstance(given, dict) or not isinstance(sent, dict):
        return given == sent
    return all(sent.get(key) == value for key, value in given.items() if value is not None)


def _without_nulls(value: Any) -> Any:
    return {k: v for k, v in value.items() if v is not None} if isinstance(value, dict) else value


def model_calls(exchange: ModelExchange) -> list[tuple[str, str, Any]]:
    """The calls an answer holds, in its order: (call id, tool name, arguments as an object)."""
    response = exchange.response or {}
    found = []
    if exchange.envelope == "responses":
        for item in response.get("output") or []:
            if item.get("type") == "function_call":
                found.append((item.get("call_id", ""), item.get("name", ""), _parsed(item.get("arguments"))))
    elif exchange.envelope == "chat":
        for choice in response.get("choices") or []:
            for call in (choice.get("message") or {}).get("tool_calls") or []:
                function = call.get("function") or {}
                found.append((call.get("id") or "", function.get("name") or "", _parsed(function.get("arguments"))))
    else:
        for block in response.get("content") or []:
            if block.get("type") == "tool_use":
                found.append((block.get("id", ""), block.get("name", ""), block.get("input")))
    return found


def _parsed(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return text
