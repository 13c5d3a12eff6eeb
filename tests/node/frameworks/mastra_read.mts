// The course's read task through Mastra (notebook 09b): the same offline model, the same files
// server, the framework's own loop. Run by course_lib.frameworks.mastra, which starts the parts,
// passes their addresses as one JSON argument and records the wire on both sides:
//   node mastra_read.mts '{"modelUrl": "http://127.0.0.1:PORT/v1", "files": {"command", "args", "cwd"},
//                          "tasks": {"read": "…", "refused": "…"}, "out": "report.json"}'
// What Mastra handed back goes to the file `out` as JSON (its own logs use the console).
import { createOpenAI } from "@ai-sdk/openai";
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { createTool } from "@mastra/core/tools";
import { LibSQLStore } from "@mastra/libsql";
import { MCPClient } from "@mastra/mcp";
import { writeFileSync } from "node:fs";
import { z } from "zod";

const config = JSON.parse(process.argv[2]);
process.env.MASTRA_TELEMETRY_DISABLED ??= "1"; // Mastra reports usage to PostHog unless told not to (offline)

// The model: any OpenAI-compatible endpoint, through the AI SDK's OpenAI provider (Responses API).
const openai = createOpenAI({ baseURL: config.modelUrl, apiKey: "offline" });
const model = openai("gpt-4.1");

// MCP: Mastra's client starts the course's files server over stdio and loads its tools,
// named <server>_<tool>: files_read_text_file.
const mcp = new MCPClient({ id: "course", servers: { files: config.files } });
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
// Approval pauses a run and resumes it later: the paused run is a snapshot, kept in storage.
const mastra = new Mastra({ agents: { reader, gated }, storage: new LibSQLStore({ id: "runs", url: ":memory:" }), logger: false });

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
}
