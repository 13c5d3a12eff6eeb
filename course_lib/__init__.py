"""course_lib — the code the notebooks build, one module per concept, in course order.

Start here:   course         start_course(): the model client, the wire capture, the MCP host
              show           print real objects and the JSON that crossed

Rules         declarations   MCP tool ⇄ Responses function tool; strict-mode adaptation
              api_rules      what the real APIs refuse: one table (rule, API, status, error, source) and its checks
Values        arguments      the model's arguments text → object → validated input
MCP           fs_server      the sandboxed files server (in-process, stdio or HTTP)
              connection     an mcp.Client whose JSON-RPC messages are recorded as they cross
              host           several servers under aliases; a sync API for cells and widgets
              stdio          the servers over stdin/stdout for outside hosts, on event-loop pipes
              http_transport the servers over Streamable HTTP (--http): Origin checks, bearer tokens
              frames         every JSON-RPC frame judged the same on stdio and HTTP (the spec's codes, ids kept)
              http_refusals  every HTTP refusal a JSON-RPC body; the SDK's plain text and 401 challenge corrected
              http_limits    bounded HTTP: header/body/idle deadlines, a connection cap, a session cap with eviction
              http_show      HTTP exchanges printed as they crossed, port and session id masked
Results       items          output items found by type, never by position (the call, wherever it sits)
              loop           function_call_output, the second request, stop conditions
              verify         link-by-link checks of a recorded round trip (fixtures)
              streaming      a streamed response put back together per item; the loop streamed
Envelopes     chat_loop      the loop over Chat Completions; messages_loop over Anthropic Messages
Reliability   results        the normalized {ok, data | error{code, message, retryable}}
              execution      allowlist → parse → schema → permission → approval → run → output
              retry          retry only what can recover, with budgets
              approval       approval bound to the exact action; idempotency keys
              notes_store    versioned writes with preview/apply and an audit trail
              records        the SQLite store under them: WAL, one transaction per operation
              nofollow       open a path one component at a time, never through a link
              parallel       several calls in one turn, each back under its call_id
              guarded_loop   the loop with the execution layer and defined terminal statuses
Explore       explorer       which objects change when head/path change (a widget)
The model     offline_model  the deterministic offline model: Responses (streamed too), Chat Completions,
                             Anthropic Messages, the hosted mcp tool (hosted_mcp); its stand-in (standin)
                             varied as real models vary; backend picks it or a real endpoint, says when a
                             demo runs offline on purpose and when a long run would cost requests
Outside       node_tools     the MCP Inspector, the reference server, the conformance suite;
                             side_by_side compares; conformance_client is the host as its client
Capstone      notes_server   the notes MCP server: search, read, save a learning gap
              assistant      search → read → answer with sources → approved write
              evaluation     metrics from traces over a question set
              grounding      each claim of an answer traced to a note the task read
              comparison     a baseline against one change: which metrics move
              follow_up      a follow-up question, graded against the note
Frameworks    frameworks     the task through the Agents SDK, pydantic-ai, Mastra, LangGraph and the Claude Agent SDK,
                             both wires tapped; the duty table
              tracing        OpenTelemetry spans of every run (off unless asked), the link in the span tree, Phoenix
Pictures      pictures       drawn from what a run recorded: sequence diagrams (Mermaid + PNG + text), timelines, charts
Interview     interview      the question cards
              drills         diagnose recorded broken traces (recorded by broken_traces)
Progress      progress       each check's outcome in a local SQLite file; a learner's own table
Editions      lang           English or 简体中文: which edition the kernel runs, say(en, zh)
              lab_edition    a server extension: /course/zh-CN/… opens JupyterLab itself in Chinese (Binder, the hub)

Only a stand-in for one slow optional import of jsonschema's is set up here (see
fast_jsonschema), so `import course_lib` stays cheap; import the module you need.
"""

from course_lib.fast_jsonschema import defer_iri_grammars

defer_iri_grammars()
