// The course's read task through Mastra (notebook 09b): the same offline model, the same files
// server, the framework's own loop. Run by course_lib.frameworks.mastra, which starts the parts,
// passes their addresses as one JSON argument and records the wire on both sides:
//   node mastra_read.mts '{"modelUrl": "http://127.0.0.1:PORT/v1", "files": {"command", "args", "cwd"},
//                          "tasks": {"read": "…", "refused": "…"}, "out": "report.json", "tracedTo": "http://…"}'
// What Mastra handed back goes to the file `out` as JSON (its own logs use the console).
import { createOpenAI } from "@ai-sdk/openai";
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { getCurrentSpan } from "@mastra/core/observability/context-storage";
import { createTool } from "@mastra/core/tools";
import { MCPClient } from "@mastra/mcp";
import { Observability } from "@mastra/observability";
import { writeFileSync } from "node:fs";
import { z } from "zod";

const config = JSON.parse(process.argv[2]);
process.env.MASTRA_TELEMETRY_DISABLED ??= "1"; // Mastra reports usage to PostHog unless told not to (offline)

// The model: any OpenAI-compatible endpoint, through the AI SDK's OpenAI provider (Responses API).
const openai = createOpenAI({ baseURL: config.modelUrl, apiKey: "offline" });
const model = openai("gpt-4.1");

// Tracing, when asked: Mastra's own spans (an agent run, the model, each tool call with its toolCallId),
// sent as OTLP/JSON to a receiver on this machine (see the end of this file); and the current span's
// W3C trace context in every MCP request's _meta (the MCP client's `traceContext` option), so the
// server's span joins the trace under the tool call that sent it.
const traced = typeof config.tracedTo === "string";
const traceContext = () => {
  const span = getCurrentSpan();
  return traced && span ? { traceparent: `00-${span.traceId}-${span.id}-01` } : undefined;
};

// MCP: Mastra's client starts the course's files server over stdio and loads its tools,
// named <server>_<tool>: files_read_text_file.
const mcp = new MCPClient({ id: "course", servers: { files: { ...config.files, traceContext } } });
const serverTools = await mcp.listTools();

// Our own tool: the rule as zod schemas (in and out), the execution ours, approval required.
const readTextFile = createTool({
  id: "read_text_file",
  description: "Read the first lines of a text file under /workspace (through the files server).",
  inputSchema: z.object({ path: z.string(), head: z.number().int().min(1).optional() }),
  outputSchema: z.object({ path: z.string(), text: z.string(), lines: z.number().int() }),
  requireApproval: true,
  execute: async (input, context) => serverTools.files_read_text_file.execute!(input, context),
});

const instructions = "Read files with the tools; answer only from what they return.";
const reader = new Agent({ id: "reader", name: "reader", instructions, model, tools: serverTools });
const gated = new Agent({ id: "gated", name: "gated", instructions, model, tools: { read_text_file: readTextFile } });
// Approval pauses a run and resumes it later: the paused run is a snapshot, kept in Mastra's storage,
// in memory unless you give it a store (@mastra/libsql and others persist it).
const observability = traced
  ? new Observability({ configs: { default: { serviceName: "mastra", exporters: [new OtlpJsonExporter(config.tracedTo)] } } })
  : undefined;
const mastra = new Mastra({ agents: { reader, gated }, logger: false, ...(observability ? { observability } : {}) });

type Output = Awaited<ReturnType<typeof reader.generate>>;
const seen = (output: Output) => ({
  text: output.text,
  finishReason: output.finishReason,
  toolCalls: output.toolCalls.map((c) => ({ toolCallId: c.payload.toolCallId, toolName: c.payload.toolName, args: c.payload.args })),
  toolResults: output.toolResults.map((r) => ({ toolCallId: r.payload.toolCallId, result: r.payload.result, isError: r.payload.isError ?? false })),
  suspended: output.finishReason === "suspended" ? output.suspendPayload : undefined,
  object: output.object,
});

// A structured answer: the rule for the final answer, as a zod schema; Mastra parses and validates it.
const FileRead = z.object({ path: z.string(), line_count: z.number().int(), text: z.string().nullable(), ok: z.boolean() });

const report: Record<string, unknown> = {};
try {
  const agent = mastra.getAgent("reader");
  report.read = seen(await agent.generate(config.tasks.read));
  report.refused = seen(await agent.generate(config.tasks.refused));
  for (const name of ["read", "refused"]) {
    report[`structured_${name}`] = seen(await agent.generate(config.tasks[name], { structuredOutput: { schema: FileRead } }));
  }

  // requireApproval: generate() stops before execute runs, with the exact call; we decide.
  const gatedAgent = mastra.getAgent("gated");
  for (const name of ["read", "refused"]) {
    const asked = await gatedAgent.generate(config.tasks[name]);
    report[`asked_${name}`] = seen(asked);
    const { toolCallId } = asked.suspendPayload;
    report[`approved_${name}`] = seen(await gatedAgent.approveToolCallGenerate({ runId: asked.runId, toolCallId }));
  }
} finally {
  writeFileSync(config.out, JSON.stringify(report, null, 1));
  await mcp.disconnect();
  await observability?.shutdown();
}

// Mastra's spans as OTLP/JSON, with the GenAI conventions' names on the ones that have them (what
// @mastra/otel-exporter does, here in a few lines and without an OpenTelemetry SDK).
function OtlpJsonExporter(endpoint: string) {
  const value = (v: unknown) =>
    typeof v === "number" ? (Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v })
    : typeof v === "boolean" ? { boolValue: v } : { stringValue: String(v) };
  const genAi = (span: any): [string, Record<string, unknown>] => {
    const a = span.attributes ?? {};
    if (span.type === "tool_call" || span.type === "mcp_tool_call") {
      const tool = span.entityName ?? span.name;
      return [`execute_tool ${tool}`, { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                                         "gen_ai.tool.call.id": a.toolCallId, "mastra.span.type": span.type }];
    }
    if (span.type === "model_generation") {
      return [`chat ${a.model ?? ""}`.trim(), { "gen_ai.operation.name": "chat", "gen_ai.request.model": a.model,
                                                "gen_ai.provider.name": a.provider, "mastra.span.type": span.type }];
    }
    if (span.type === "agent_run") {
      return [`invoke_agent ${span.entityName ?? ""}`.trim(), { "gen_ai.operation.name": "invoke_agent",
                                                                "gen_ai.agent.name": span.entityName, "mastra.span.type": span.type }];
    }
    return [span.name, { "mastra.span.type": span.type }];
  };
  const ns = (d: Date | string | undefined) => String(BigInt(new Date(d ?? Date.now()).getTime()) * 1000000n);
  return {
    name: "otlp-json",
    async exportTracingEvent(event: any) {
      if (event.type !== "span_ended") return;
      const span = event.exportedSpan;
      const [name, attributes] = genAi(span);
      const body = { resourceSpans: [{
        resource: { attributes: [{ key: "service.name", value: { stringValue: "mastra" } }] },
        scopeSpans: [{ scope: { name: "mastra_read" }, spans: [{
          traceId: span.traceId, spanId: span.id, ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
          name, kind: name.startsWith("chat") ? 3 : 1, startTimeUnixNano: ns(span.startTime), endTimeUnixNano: ns(span.endTime),
          attributes: Object.entries(attributes).filter(([, v]) => v !== undefined && v !== null).map(([key, v]) => ({ key, value: value(v) })),
          status: { code: span.errorInfo ? 2 : 0 },
        }] }],
      }] };
      await fetch(`${endpoint}/v1/traces`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    },
    async flush() {},
    async shutdown() {},
  };
}
