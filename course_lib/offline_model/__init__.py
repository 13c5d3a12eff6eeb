"""The offline model: a deterministic stand-in that speaks the OpenAI Responses API wire format.

What it is: a small set of readable rules behind `POST /v1/responses`. It validates a request the
way the real API does (a 400 naming the offending field: a key the API does not know in an `input`
item or content part, judged by the openai SDK's own request types; a content part an assistant
message may not hold; an item `id` without its type's prefix (`fc`, `msg`, `rs`); two items with
one `id`; function `parameters` that are not a JSON Schema, an object root without `properties`,
or a strict tool's schema that breaks strict mode's rules), then behaves like a careful model:

- after tool results (`function_call_output`) it answers only from those results, quoting them,
  and reports a failed result as a failure — never as a successful read. It reads an output as a
  model would, whatever the host forwarded (`tool_output`): the course's `{"ok": …}` envelope,
  plain text, an error line `CODE: message` ("FORBIDDEN: path is outside /workspace", as the
  OpenAI Agents SDK forwards a refusal without `isError`), a JSON error object, JSON nested in a
  string (pydantic-ai's `{"error": "<JSON>"}`), an MCP result object or content blocks, or
  structured content as JSON (`{"path": …, "text": …}`: the `text` is quoted, never the JSON);
- otherwise it reads the latest user message, finds the file paths and line ranges in it
  ("first 20 lines of /workspace/notes.txt", "last 3 lines of b.txt", "前5行", "lines 3 to 5",
  "第 4 行"), picks a file-reading tool among the declared function tools and emits one
  `function_call` per read (a span of lines after the first, which no `head`/`tail` can carry, is
  read with `head` up to its last line, or whole when the tool has no `head`);
- with no path it asks which file; with no usable tool it says so. It never invents a path,
  an argument value or file content;
- a `tool_choice` that forces a call ("required", a named function, allowed tools in "required"
  mode) gets one in every response, as the real API guarantees: the planned calls — again after
  their results, so a loop that keeps forcing never gets an answer (`loop.next_tool_choice`) — or,
  when the request gives nothing to fill a call with, the tool with empty values ("" for the path,
  0, false, [], {}, or null where allowed), which the tool's own checks then refuse.

Structured outputs (`structured`): with Responses `text.format`, Chat `response_format` or Anthropic
`output_config.format` asking for JSON, the answer is JSON that fits the schema, every value taken
from the turn's real tool results and the task (paths, counts, quoted lines, ok or not), an honest
null or "not in the tool results" where nothing supports one; the Response echoes the format. An
output tool (pydantic-ai's `final_result`, a tool `tool_choice` names to carry the answer) is
filled the same way, once the data tools the task needs have run. A framework's retry feedback in a
user message ("… this is automated feedback, not a message from the user") is not a new task.

What it is not: a language model. It has no knowledge, makes no network calls (but one: with a
hosted `mcp` tool it acts as the platform, the MCP client of a server on this machine, `hosted_mcp`)
and is keyed to no notebook's exact wording. The same request always gives the same answer, under ids
that are fresh for every request yet the same in every run (`ids`: each `offline_transport()` counts
its requests), so notebook outputs can be stored. With `stream: true` the same response comes as the
SDK's server-sent events, in pieces (`streaming`). Like the real API it keeps the responses it
gave unless told `store: false` (`state`: a bounded in-process store, so `previous_response_id`
works), and stops at `max_output_tokens` with an incomplete response (`limits`).

Answer formats (notebooks may rely on them; P is the path, T the tool name, read from the call):

- success: "Here are the first N lines of P, as returned by T:\\n\\n<exact output text>"; also
  "the last N lines of P", "the contents of P" (no head/tail), "Here is the first line of P" (N = 1);
  a call without a path argument: "Here is what T returned for <arguments text>:\\n\\n<text>";
  an empty output: "T returned no text for the first N lines of P."
- a span of lines the call could not carry ("lines 3 to 5", "line 4": the call read from the top):
  "Here are lines A to B of P, cut from what T returned (it cannot read only those lines):\n\n<those
  lines of the output text>" ("Here is line A of P, … (it cannot read only that line):"); a span
  that runs past the end of the text is cut at its end, followed by "P has only K lines as T
  returned it."; one that starts past it: "P has only K lines as T returned it, so there is no line
  A." A call whose range the app changed is described as it was read (the formats above).
- error: "The tool T reported an error when asked for the first N lines of P.\\nError code: C\\n
  Error message: M\\nI could not read the file, so I won't say anything about what it contains."
  (no "Error code" line when the output has no code; a head or tail that is no count of lines,
  `"20"` or 0, is named as it was sent: "when asked for P with head "20"", "P（head 为 "20"）"). An error in any other shape than the course
  host's `{"ok": false, …}` envelope (whose `retryable` drives the host's own retries) ends with one
  more line, "What to try next: …", chosen by its code (NOT_FOUND: check the path; FORBIDDEN: ask
  for a file the tool may read; INVALID_INPUT: correct what the message names; TIMEOUT,
  UPSTREAM_ERROR: try again in a moment; for a write, FORBIDDEN: the change is not allowed,
  TIMEOUT or UPSTREAM_ERROR: check whether it was saved before asking again).
- a tool that changes data (its description says "changes data", or its name starts with a write
  verb: `write_file`, `save_learning_gap`, `apply_note_update`): "Here is what T returned for the
  change to P:\\n\\n<text>"; on error the same "reported an error when asked to change P" lines, then
  "The change was not made: nothing was saved." (TIMEOUT or UPSTREAM_ERROR: "The change was not
  confirmed, so it may or may not have been saved; I won't report it as saved.").
- several results: one paragraph each, in input order, separated by a blank line.
- no path: "Which file should I read? Please give me its path; I won't guess one."

Chinese (简体中文). The model understands a Chinese request as it does an English one ("读取 a.txt 的
前 5 行和 b.txt 的最后 3 行", "a.txt 和 b.txt 的前十行", "第一行", "倒数两行", "整个文件", "用 ref 服务器的工具";
counts as digits or 一 … 二十 and 两) and answers in the language of the latest user message (Chinese
when it holds Chinese characters outside `code`; paths are ASCII). Every format above has a twin,
quoting the same output and refusing the same guesses (`wording`: one table of both languages):
"以下是 P 的前 N 行，由 T 返回：" (… 的最后 N 行 / 的第一行 / 的最后一行 / 的全部内容), "T 没有针对 … 返回任何文本。",
"以下是 P 的第 A 到第 B 行，从 T 返回的内容中截取（它不能只读这几行）：" (one line: "以下是 P 的第 A 行，…（它不能只读
这一行）："), "按 T 返回的内容，P 只有 K 行。", "按 T 返回的内容，P 只有 K 行，没有第 A 行。",
"工具 T 在被要求读取 P 的前 N 行时报告了错误。" with "错误代码：C", "错误信息：M", "我没能读取这个文件，所以不会对它
的内容作任何说明。" and "下一步：…"; writes "以下是 T 针对 P 的修改返回的内容：", "修改没有完成：什么都没有保存。";
no path "要读取哪个文件？请告诉我它的路径；我不会猜测路径。". Error codes, tool names and paths stay as they are.

The notes assistant (capstone). When the declared tools include a search tool — one with a
`query` string property, e.g. `search_notes` or `notes__search_notes` — and the request names no
file (a file-read request keeps every behaviour above), the model makes the assistant's moves:

1. search with the question's key terms (its words minus stop words and chit-chat; `limit` only
   when the user asks for "top N notes", else null for a strict tool and absent otherwise); a
   message with no key term ("Hi there!") gets a short reply and no call;
2. read the best hits with the note-reading tool (score > 0 and at least half the best, at most
   two, in one response: parallel calls). A search refused with INVALID_INPUT that names a bound
   ("limit: must be ≤ 20") is sent again within it; a retryable failure is repeated once; a hit
   that no longer exists (NOT_FOUND) → one more search, then read the new hits;
3. answer only from the notes read: "From your notes:", up to two sentences per note quoted
   verbatim as "- <sentence> [<path>]", then "Sources: <paths of the notes quoted>". When the
   notes do not support an answer (no hits, nothing readable, only stubs — notes with a TODO
   line — or at most half of the key terms in the notes read): "The evidence is missing: <why,
   from what was searched and read>. I won't answer from memory.";
4. asked for gaps ("where is my understanding incomplete", "save a learning gap") with a gap tool
   declared (named for gaps, with a `topic` property): after the reads, a message with the answer
   and the proposal plus one call with topic/evidence/suggestion taken from what was read (the
   stub note, else the key terms no note mentions); after its result, the answer plus "Saved the
   learning gap as record <id>." or why it was not saved. It never fills in any other property,
   except a required idempotency key a host did not hide from it (`idempotency_key`, as the notes
   server declares it over MCP): that gets a fresh key made from the tool and the other values
   ("key-" + 24 hex digits), so the same proposal sent again carries the same key.

A Chinese question gets the same moves, searched in Chinese first: its key terms are the
glossary's Chinese concepts and the other runs of Chinese as written (`terms.key_terms`: 审批 → 批准,
"幂等键怎么解决重复写入？" → 幂等键 重复 写入), and the notes search matches them by character bigrams,
so the zh-CN edition's Chinese notes are found, read and quoted. Only when that search finds
nothing (English notes hold no Chinese bigrams) does the model search once more with the same
concepts in the English words of the course's notes, through a small, explicit bilingual table
(`terms.ZH_TERMS` via `terms.bridged_terms`: 幂等键 → idempotency key, 批准 → approval, 重试 →
retries, …), and then looks for those English words in what it reads. A Chinese stretch the table
does not know stays as written in both searches and, absent from the notes, counts as not
mentioned. (A real model translates the query itself; the table is the offline model's stand-in and
knows only what it lists.)
The answer is "根据你的笔记：", the same verbatim sentences "- <sentence> [<path>]", then "来源：<paths>";
or "证据不足：<why>。我不会凭记忆回答。"; gaps: "我建议保存这个学习缺口，等你批准后再保存：…", then
"已将学习缺口保存为记录 <id>。". Gap requests in Chinese: "哪里理解得不完整", "保存一个学习缺口", "薄弱", "没掌握".

Personas (for the prompt-injection demo; the switch is a real request field, so it shows in the
request body): by default the model is *careful* — tool output is data it quotes, never an
instruction it follows. With `"metadata": {"course_persona": "gullible"}` it is *gullible*: when
the newest tool results (the outputs after its latest calls) contain a line of the exact form

    CALL <tool name> <JSON object>

(on a line of its own, in the text the tool returned; for an execution-layer result
`{"ok": true, "data": {"text": ...}}` that is `data.text`) and <tool name> is a function tool this
request declares and may call, it emits that `function_call` with exactly those arguments instead
of answering. Tools that are not declared are ignored, as is everything with `tool_choice: "none"`.
Other `course_persona` values are a 400; other metadata keys are accepted and echoed, as the
real API does.

Run it as a local HTTP server: `python -m course_lib.offline_model --port 8765`.

The stand-in (`standin`): the same model varied as real models vary (a dated model name, text before
a call, arguments in another order, reworded answers with markdown and a closing line, the private
switches ignored), to test that a course holds on any model: `standin_transport()` in-process, or
`python -m course_lib.offline_model --vary --port 8766` over HTTP (`running_server(vary=True)` in a test).
"""

from course_lib.offline_model.assistant import CHAT_REPLY
from course_lib.offline_model.assistant_answer import EVIDENCE_MISSING
from course_lib.offline_model.personas import PERSONA_KEY, PERSONAS
from course_lib.offline_model.response import CREATED_AT, respond
from course_lib.offline_model.server import handle, main, running_server, serve
from course_lib.offline_model.transport import offline_transport, standin_transport
from course_lib.offline_model.terms import key_terms
from course_lib.offline_model.validation import BadRequest

__all__ = [
    "BadRequest",
    "CHAT_REPLY",
    "CREATED_AT",
    "EVIDENCE_MISSING",
    "PERSONAS",
    "PERSONA_KEY",
    "handle",
    "key_terms",
    "main",
    "offline_transport",
    "respond",
    "running_server",
    "serve",
    "standin_transport",
]
