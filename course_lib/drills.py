"""Diagnose the trace: the source's failure table, and recorded broken runs to diagnose with it.

The source ends its failure section with a table — symptom → likely cause → what to check first
(`failure_table.DIAGNOSIS_ROWS`, rows A–H, in the course's words). Each file in
`fixtures/broken_traces/` is a real run — the offline model through the real openai SDK, the
real files MCP server, the real `Executor` — broken deliberately in exactly one place (a vague
tool, a second server, a loop that forgets the result, a blind retry, an "allow everything"
approval, outputs paired by position, a failure passed on as plain text, a model that writes
numbers as strings, one call per round trip). The learner reads the trace, picks the row and the
first thing to check, and `check_diagnoses` explains any wrong pick.

    from course_lib.drills import load_broken_trace, show_broken_trace, check_diagnoses
    show_broken_trace(load_broken_trace("wrong_tool"))
    check_diagnoses(answers)      # {trace name: (row letter, first check)}

In the zh-CN edition (`course_lib.lang`) what the learner reads is Chinese: the report that opens
each trace (`REPORTS`), the timeline's labels, the explanations and the check's messages. What the
trace recorded (requests, responses, the executor's steps) stays as it was sent.

The files are generated, never typed: `python -m course_lib.drills --regenerate [OUT_DIR]`
records every run again with `course_lib.broken_traces`, and the same code gives byte-identical
files (the offline model is deterministic, ids are hashes or counters, clocks are manual,
temporary folders never show).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_lib.broken_traces import TRACES, regenerate, traces_dir
from course_lib.execution import step_label
from course_lib.exercises import failed, not_answered, passed
from course_lib.exercises.guard import guard_checks
from course_lib.failure_table import CHECKS_ZH, ROWS
from course_lib.lang import display_width, language, pad, say
from course_lib.notes_store import AUDIT_HEADERS, AUDIT_HEADERS_ZH
from course_lib.notes_store import detail_text as _audit_detail  # the audit log's own wording of a detail
from course_lib.show import show_items

REPORTS: dict[str, tuple[str, str]] = {
    "invented_answer": ("The user says: these five lines are not in my notes.txt at all.",
                        "用户说：这五行根本不在我的 notes.txt 里。"),
    "wrong_tool": ("The user says: that is not my notes.txt — those lines are from an old draft.",
                   "用户说：这不是我的 notes.txt，那几行来自一份旧草稿。"),
    "result_not_sent": ("The user got no answer ('incomplete: max_steps'), although the server log shows todo.md "
                        "read successfully three times.",
                        "用户没有得到回答（'incomplete: max_steps'），可服务器日志显示 todo.md 成功读取了三次。"),
    "call_id_swap": ("The user says: under 'the first 2 lines of /workspace/notes.txt' the answer lists three to-do "
                     "items — those are from todo.md, and the other two files look swapped too.",
                     "用户说：在“/workspace/notes.txt 的前 2 行”下面，回答列出的是三条待办事项，那些来自 todo.md；"
                     "另外两个文件看起来也被调换了。"),
    "error_as_success": ("Security asks: the assistant says it showed the first lines of /etc/passwd. Did the sandbox fail?",
                         "安全团队问：助手说它展示了 /etc/passwd 的前几行。沙箱失效了吗？"),
    "loose_arguments": ("Support says: most file requests this week ended with INVALID_INPUT instead of the lines asked for.",
                        "客服说：这周大多数读文件的请求都以 INVALID_INPUT 告终，而不是返回要的那几行。"),
    "serial_slow": ("Ops says: reading three short files takes several seconds and costs far more tokens than expected.",
                    "运维说：读三个很短的文件要好几秒，花的 token 也远超预期。"),
    "blind_retry": ("The user confirmed one learning gap; their list now shows it twice.",
                    "用户确认了一个学习缺口；现在列表里它出现了两次。"),
    "injection": ("The user says: after I asked to read an email, my notes.txt was replaced by one line. Every test "
                  "of the write tool passes.",
                  "用户说：我让助手读了一封邮件之后，我的 notes.txt 被替换成了一行字。写工具的每个测试都通过了。"),
}  # fmt: skip
"""trace name → (its recorded report, 中文): the complaint that opens the trace. A translation is
shown only while its English is the recorded one (a re-recorded, reworded report shows in English)."""

AFTER_THE_RUN = {
    "server log": "服务器日志",
    "learning gaps stored": "已保存的学习缺口",
    "audit log": "审计日志",
    "first line of /workspace/notes.txt now": "/workspace/notes.txt 现在的第一行",
    "how the app's loop ended": "应用的循环是怎样结束的",
    "usage over the whole task": "整个任务的用量",
}
"""What a trace shows after the run (its `what`), in Chinese."""

def load_broken_trace(name: str) -> dict[str, Any]:
    """One recorded broken trace, as written by `regenerate`.

    Raises:
        KeyError: no trace has that name.
    """
    if name not in TRACES:
        raise KeyError(say(f"no broken trace {name!r}; there are: {', '.join(TRACES)}",
                           f"没有名为 {name!r} 的出错轨迹；现有的是：{', '.join(TRACES)}"))
    trace = json.loads((traces_dir() / f"{name}.json").read_text(encoding="utf-8"))
    english, chinese = REPORTS.get(name, ("", ""))
    if language() == "zh-CN" and trace["report"] == english:
        trace["report"] = chinese  # the caption, not part of what was recorded
    return trace


# ---- reading a trace ----------------------------------------------------------------------------


def _short(text: str, limit: int = 70) -> str:
    text = text.replace("\n", "⏎")
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def show_broken_trace(trace: dict[str, Any], *, answer_lines: int = 8) -> None:
    """Print a trace as a timeline: each model request (its input items, tools and switches),
    each response's items, each tool call (its MCP exchange or executor steps), and what was left
    after the run. The final answer is printed in full, up to `answer_lines` lines."""
    print(say("report: {report}", "报告：{report}", report=trace["report"]))
    for event in trace["events"]:
        kind = event["event"]
        if kind == "model_request":
            body = event["body"]
            tools = ", ".join(tool.get("name", tool.get("type", "?")) for tool in body.get("tools", [])) or say("none", "无")
            switches = [say("tools: {tools}", "工具：{tools}", tools=tools)] + [
                f"{key}: {json.dumps(body[key])}" for key in ("tool_choice", "parallel_tool_calls", "metadata") if key in body]
            print(say("\n── request {n} (app → model) · ", "\n── 请求 {n}（应用 → 模型）· ", n=event["n"]) + " · ".join(switches))  # fmt: skip
            if event["n"] == 1:
                for tool in body.get("tools", []):
                    strict = f"strict: {json.dumps(tool['strict'])} " if "strict" in tool else ""
                    print(say("    tool {name}: {strict}description {description}", "    工具 {name}：{strict}描述 {description}",
                              name=tool.get("name"), strict=strict, description=_short(tool.get("description", ""), 60)))
            show_items(body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}])
        elif kind == "model_response":
            print(say("── response {n} (model → app)", "── 响应 {n}（模型 → 应用）", n=event["n"]))
            for item in event["body"]["output"]:
                if item["type"] == "function_call":
                    print(f"   function_call {item['name']} {item['arguments']}  call_id={item['call_id']}")
                elif item["type"] == "message":
                    lines = item["content"][0]["text"].splitlines()
                    more = say("… ({k} more lines)", "……（还有 {k} 行）", k=len(lines) - answer_lines)
                    cut = lines[:answer_lines] + ([more] if len(lines) > answer_lines else [])
                    print("   message:", *("   │ " + line for line in cut), sep="\n")  # fmt: skip
        elif kind == "tool_call":
            _show_tool_call(event)
        else:
            print(say("── after the run: {what}", "── 运行之后：{what}", what=say(event["what"], AFTER_THE_RUN.get(event["what"], event["what"]))))
            data = event["data"] if isinstance(event["data"], list) else [event["data"]]
            if event["what"] == "audit log":
                data = _audit_lines(data)
            for line in data:
                print(f"   {json.dumps(line, ensure_ascii=False) if not isinstance(line, str) else line}")


def _audit_lines(lines: list[Any]) -> list[Any]:
    """The recorded audit table as the edition shows it: in the zh-CN edition the header and each
    record's detail in Chinese (`notes_store`'s own words), the records' values as recorded."""
    if language() != "zh-CN" or not lines or not isinstance(lines[0], str) or lines[0].split() != list(AUDIT_HEADERS):
        return lines
    starts = [lines[0].index(word) for word in AUDIT_HEADERS]  # the table is fixed-width: columns start under their word
    rows = [[line[a:b].rstrip() for a, b in zip(starts, [*starts[1:], None])] for line in lines[1:]]
    table = [list(AUDIT_HEADERS_ZH), *([*row[:-1], _audit_detail(row[-1])] for row in rows)]
    widths = [max(display_width(row[i]) for row in table) for i in range(len(AUDIT_HEADERS) - 1)]
    return ["  ".join(pad(cell, w) for cell, w in zip(row, widths)) + "  " + row[-1] for row in table]


def _step(recorded: str) -> str:
    """One recorded step ("approval ok") with the step's name in the edition's language (批准 ok)."""
    name, _, outcome = recorded.partition(" ")
    return f"{step_label(name)} {outcome}".strip()


def _show_tool_call(event: dict[str, Any]) -> None:
    print(say("── tool call {id}: ", "── 工具调用 {id}：", id=event["call_id"]) + f"{event['tool']} {event['arguments']}")
    if event.get("steps"):
        print(say("   executor {id}: ", "   执行器 {id}：", id=event.get("trace_id")) + " → ".join(map(_step, event["steps"])))
    if event.get("mcp"):
        request, response = event["mcp"]["request"], event["mcp"]["response"] or {}
        result = response.get("result", {})
        text = " ".join(block.get("text", "") for block in result.get("content", []))
        print(say("   MCP id {id} on server {server}: ", "   MCP id {id}，服务器 {server}：", id=request["id"], server=event["server"])
              + f"tools/call {request['params']['name']} {json.dumps(request['params']['arguments'])} → isError "
              f"{str(result.get('isError', False)).lower()}" + say(", text ", "，text ") + _short(text, 50))  # fmt: skip
    if event.get("result") is not None:
        print(say("   result: ", "   结果：") + _short(json.dumps(event["result"], ensure_ascii=False), 90))


# ---- the drill: name the row and the first check ------------------------------------------------


@dataclass(frozen=True)
class Diagnosis:
    """The answer for one trace: its row, the first check, and why — with hints for wrong picks.

    Each explanation is written twice, (English, 中文); `evidence`, `why_first` and `confusions`
    give the edition's one."""

    row: str
    check: str
    evidence_text: tuple[str, str]  # where the trace shows it
    why_first_text: tuple[str, str]  # why this check comes before the row's other two
    confusions_text: dict[str, tuple[str, str]]  # a tempting wrong row → why it is not that

    @property
    def check_label(self) -> str:
        """The first check as the learner reads it: `check`, with its Chinese gloss in the zh-CN edition."""
        gloss = CHECKS_ZH.get(self.check, self.check)
        return say(self.check, self.check if gloss == self.check else f"{self.check}（{gloss}）")

    @property
    def evidence(self) -> str:
        return say(*self.evidence_text)

    @property
    def why_first(self) -> str:
        return say(*self.why_first_text)

    @property
    def confusions(self) -> dict[str, str]:
        return {row: say(*why) for row, why in self.confusions_text.items()}


ANSWERS: dict[str, Diagnosis] = {
    "invented_answer": Diagnosis(
        "A", "call trace",
        ("response 1 holds a message and no function_call: nothing was read, yet the answer quotes 'lines'",
         "响应 1 里只有一条 message，没有 function_call：什么也没读，回答却引用了“几行内容”"),
        ("the call trace answers the first question in seconds — was any tool called at all? Only then ask why "
         "not (the vague 'search' description) and add eval samples for it",
         "调用轨迹（call trace）几秒钟就能回答第一个问题：到底有没有调用工具？之后才问为什么没调用（'search' 的描述太含糊），"
         "并为它补上评估样例（eval samples）"),
        {"B": ("no tool was chosen at all — wrong or right — so this is not about picking the wrong one",
               "根本没有选中任何工具（不论对错），所以这不是选错工具的问题"),
         "D": ("row D needs a tool that succeeded; here no tool ran",
               "D 行的前提是有一个执行成功的工具；这里没有任何工具运行")}),
    "wrong_tool": Diagnosis(
        "B", "tool names",
        ("the model called arch__read_text_file; request 1 declared two tools with the same name after the "
         "prefix and the same description, and the archive server answered",
         "模型调用了 arch__read_text_file；请求 1 声明了两个去掉前缀后同名、描述也相同的工具，回答的是 archive 服务器"),
        ("the names and descriptions are what the model chose from: two identical readers leave it nothing to go "
         "on. Counter-examples and a smaller tool set are the fixes that follow",
         "模型就是根据名称和描述做选择的：两个一模一样的读取工具让它无从判断。加反例、缩小工具集是随后的修复"),
        {"D": ("the tool did succeed, but it was the wrong tool: check which tool was chosen before checking the "
               "call_id pairing",
               "工具确实成功了，但它是错的工具：先查选中的是哪个工具，再查 call_id 配对"),
         "A": ("a tool was called; the answer quotes what it returned",
               "调用了工具；回答引用的正是它返回的内容")}),
    "result_not_sent": Diagnosis(
        "D", "full context",
        ("every MCP read succeeded, but requests 2 and 3 carry only the user's message: no function_call, no "
         "function_call_output — so the model asks for the same read again",
         "每次 MCP 读取都成功了，但请求 2 和请求 3 只带着用户的消息：没有 function_call，也没有 function_call_output"
         "，于是模型再次请求同一次读取"),
        ("the result exists (the MCP responses show it); what is missing is in the next request's input. Read "
         "the full context the app sent before anything else",
         "结果是存在的（MCP 响应里看得到）；缺的是下一次请求的 input 里的东西。先读应用发出的完整上下文，再看别的"),
        {"G": ("the loop count is high, but that is the consequence: look at what request 2 carried",
               "循环次数确实很高，但那是后果：看看请求 2 带了什么"),
         "E": ("nothing failed — every tools/call has isError false",
               "没有任何失败：每次 tools/call 的 isError 都是 false"),
         "A": ("the model did call the tool, three times",
               "模型确实调用了工具，还调用了三次")}),
    "call_id_swap": Diagnosis(
        "D", "call_id",
        ("each MCP read returned the right file, but in request 2 the output under notes.txt's call_id holds "
         "todo.md's three lines: the outputs were handed back by position, in the order the reads finished",
         "每次 MCP 读取都返回了正确的文件，但在请求 2 里，notes.txt 的 call_id 下装的是 todo.md 的三行：输出是按位置交回的，"
         "顺序是读取完成的先后"),
        ("compare each function_call_output with the call its call_id names (notes.txt asked for 2 lines and got "
         "3 to-do items). The pairing is wrong before the output structure or the rest of the context matters",
         "把每个 function_call_output 和它的 call_id 所指的调用对照（notes.txt 要的是 2 行，拿到的是 3 条待办）。"
         "配对一错，输出结构和上下文的其余部分就都谈不上了"),
        {"B": ("the right tool was called for every file",
               "每个文件调用的工具都是对的"),
         "E": ("every read succeeded; the answer is wrong because results went to the wrong calls",
               "每次读取都成功了；回答错，是因为结果交给了错误的调用")}),
    "error_as_success": Diagnosis(
        "E", "error classification",
        ("the MCP response says isError true (FORBIDDEN: path is outside /workspace), but the output sent "
         "back is only its message (path is outside /workspace) — no ok: false, no code — so the model quoted it "
         "as file content",
         "MCP 响应写着 isError true（FORBIDDEN: path is outside /workspace），但发回去的输出只有它的消息"
         "（path is outside /workspace），没有 ok: false，也没有 code，于是模型把它当作文件内容引用了"),
        ("the sandbox worked; the failure was lost on the way back. Check that every failure reaches the model "
         "as a classified error ({ok: false, error: {code, retryable}}) before tuning retries or stop rules",
         "沙箱起了作用；失败是在回程中丢掉的。先检查每次失败是否都以分类后的错误（{ok: false, error: {code, retryable}}）"
         "到达模型，再去调重试或停止规则"),
        {"H": ("nothing over-reached: the server refused the read (isError true); the app dropped the refusal",
               "没有越权：服务器拒绝了这次读取（isError true）；是应用把拒绝弄丢了"),
         "D": ("the tool did not succeed — it refused",
               "工具并没有成功：它拒绝了")}),
    "loose_arguments": Diagnosis(
        "C", "strict mode",
        ("the call sent head as the string \"3\"; the server refused it with INVALID_INPUT; request 1 declared "
         "the tool with strict: false",
         "这次调用把 head 作为字符串 \"3\" 发出；服务器以 INVALID_INPUT 拒绝；请求 1 声明这个工具时用的是 strict: false"),
        ("the rule already says head is an integer, so the description is not the gap: without strict mode "
         "nothing holds the model to that rule. Turn strict on (nulls for optional fields) first",
         "规则已经写明 head 是整数，所以缺口不在描述：没有严格模式，就没有什么能让模型守住这条规则。先打开 strict"
         "（可选字段用 null）"),
        {"E": ("the failure was reported correctly and the model did not guess; the problem is how often the "
               "arguments are wrong",
               "失败被正确报告了，模型也没有乱猜；问题在于参数出错有多频繁"),
         "H": ("nothing was over-reached: the arguments never passed the schema",
               "没有越权：参数根本没通过 schema")}),
    "serial_slow": Diagnosis(
        "G", "loop count",
        ("four model requests for three independent reads: parallel_tool_calls: false, one call per response, "
         "and each request resends the growing context",
         "三次互不依赖的读取用了四次模型请求：parallel_tool_calls: false，每个响应只有一次调用，每次请求都重发不断增长的上下文"),
        ("the token bill follows from the number of rounds: count the model requests per task first; tool time "
         "is small here",
         "token 账单取决于轮数：先数每个任务的模型请求次数；这里工具耗时很小"),
        {"D": ("every answer is right; only the cost is wrong",
               "每个回答都是对的；错的只是成本"),
         "B": ("the right tool is chosen every time",
               "每次都选对了工具")}),
    "blind_retry": Diagnosis(
        "F", "idempotency key",
        ("trace-0001 stored the record and then timed out; the app sent the same call again (trace-0002), "
         "which wrote a second record: the write carried no idempotency key",
         "trace-0001 存下了记录，然后超时；应用再次发出同一个调用（trace-0002），又写了第二条记录：这个写操作没有带幂等键"),
        ("a timeout means 'unknown', not 'not done'. With a key the retry would have replayed the stored result; "
         "the execution record and a status query are how you repair it afterwards",
         "超时意味着“不知道”，而不是“没做成”。有了键，重试就会重放已保存的结果；执行记录和状态查询是事后修复的手段"),
        {"E": ("the failure was classified correctly (TIMEOUT, retryable) — the mistake is retrying a write "
               "that has no key",
               "失败的分类是对的（TIMEOUT，可重试），错在重试了一个没有键的写操作"),
         "G": ("this is not about cost: the user's data changed twice",
               "这不是成本问题：用户的数据被改了两次")}),
    "injection": Diagnosis(
        "H", "approval and audit",
        ("after reading the email the model called apply_note_update; its executor steps say 'approval ok' "
         "although nobody approved this action, and the audit log shows it ran",
         "读完邮件后，模型调用了 apply_note_update；它的执行器步骤写着“批准 ok”，可并没有人批准这个动作，审计日志显示它执行了"),
        ("identity and scope were fine — alice writing her own notes. What let it through is an approval not "
         "bound to this exact action; the audit log shows which input led to which call",
         "身份和范围都没问题：alice 在写她自己的笔记。放它通过的，是一个没有绑定到这个确切动作的批准；"
         "审计日志显示了哪条输入引出了哪次调用"),
        {"B": ("the model chose the tool the email told it to; the app must not let text in a tool result "
               "authorize a write",
               "模型选的正是邮件让它选的工具；应用不能让工具结果里的文本授权一次写入"),
         "E": ("nothing failed: the write succeeded, which is the problem",
               "什么也没失败：写入成功了，这正是问题所在")}),
}
EXERCISE_TRACES = tuple(name for name in TRACES if name != "invented_answer")
"""The traces the learner diagnoses (`invented_answer` is the worked example)."""


def check_diagnoses(answers: dict[str, tuple[str, str]]) -> bool:
    """Check `{trace name: (row letter, first check)}` for every exercise trace; explain the first
    wrong one — the evidence in the trace, and why this check comes first."""
    if not_answered(answers):
        return failed(say("Not answered yet: fill in answers = {trace name: (row letter, first check)}.",
                          "还没有作答：填写 answers = {轨迹名: (行字母, 先检查的项)}。"))
    if not isinstance(answers, dict):
        return failed(say(f"answers must be a dict {{trace name: (row letter, first check)}}; got a {type(answers).__name__}.",
                          f"answers 必须是一个字典 {{轨迹名: (行字母, 先检查的项)}}；你给的是 {type(answers).__name__}。"))
    if unknown := [name for name in answers if name not in ANSWERS]:
        return failed(say(f"{unknown[0]!r} is not a trace; the traces are: {', '.join(EXERCISE_TRACES)}.",
                          f"{unknown[0]!r} 不是一条轨迹；轨迹有：{', '.join(EXERCISE_TRACES)}。"))
    for name in EXERCISE_TRACES:
        given = answers.get(name, ...)
        if not_answered(given) or (isinstance(given, tuple) and ... in given):
            return failed(say(f"Not answered yet: {name} still needs (row letter, first check).",
                              f"还没有作答：{name} 还需要 (行字母, 先检查的项)。"))
        if not (isinstance(given, tuple | list) and len(given) == 2 and all(isinstance(x, str) for x in given)):
            return failed(say(f"{name}: give a pair (row letter, first check), e.g. (\"A\", \"call trace\") as for the "
                              f"worked example; got {given!r}.",
                              f"{name}：请给出一对 (行字母, 先检查的项)，例如讲解过的例子的 (\"A\", \"call trace\")；"
                              f"你给的是 {given!r}。"))
        letter, check = given[0].strip().upper(), given[1].strip()
        expected = ANSWERS[name]
        if letter not in ROWS:
            return failed(say(f"{name}: {letter!r} is not a row; the rows are A–H (show_diagnosis_table()).",
                              f"{name}：{letter!r} 不是表里的行；行是 A–H（show_diagnosis_table()）。"))
        if letter != expected.row:
            why = expected.confusions.get(letter) or say(f"look at the evidence again: {expected.evidence}",
                                                         f"再看一遍证据：{expected.evidence}")
            return failed(say(f"{name}: not row {letter} ({ROWS[letter].symptom}) — {why}.",
                              f"{name}：不是 {letter} 行（{ROWS[letter].source}）：{why}。"))
        if check not in ROWS[letter].checks:
            return failed(say(f"{name}: {check!r} is not one of row {letter}'s checks: {', '.join(ROWS[letter].checks)}.",
                              f"{name}：{check!r} 不是 {letter} 行要检查的项；它们是：{'、'.join(map(_glossed, ROWS[letter].checks))}。"))
        if check != expected.check:
            return failed(say(f"{name}: row {letter} is right, but check {expected.check!r} first, not {check!r}: "
                              f"{expected.why_first}.",
                              f"{name}：{letter} 行是对的，但应该先检查 {_glossed(expected.check)}，不是 {check!r}："
                              f"{expected.why_first}。"))  # fmt: skip
    return passed(say(f"all {len(EXERCISE_TRACES)} traces diagnosed: the right row and the right first check for each.",
                      f"{len(EXERCISE_TRACES)} 条轨迹全部诊断完毕：每一条都选对了行，也选对了先检查的项。"))

def _glossed(check: str) -> str:
    """A check as the learner writes it, with its Chinese gloss: 'call trace'（调用轨迹）."""
    gloss = CHECKS_ZH.get(check, check)
    return repr(check) if gloss == check else f"{check!r}（{gloss}）"


SOLUTION: dict[str, tuple[str, str]] = {name: (ANSWERS[name].row, ANSWERS[name].check) for name in EXERCISE_TRACES}


guard_checks(globals())


def main(argv: list[str] | None = None) -> None:
    """`python -m course_lib.drills --regenerate [OUT_DIR]`."""
    parser = argparse.ArgumentParser(prog="python -m course_lib.drills", description=__doc__.splitlines()[0])
    parser.add_argument("--regenerate", action="store_true", help="record the broken traces again and write them")
    parser.add_argument("out_dir", nargs="?", type=Path, help="where to write (default: fixtures/broken_traces)")
    options = parser.parse_args(argv)
    if not options.regenerate:
        parser.error("nothing to do: pass --regenerate")
    for path in regenerate(options.out_dir):
        print(f"wrote {path.name}")


if __name__ == "__main__":
    main()
