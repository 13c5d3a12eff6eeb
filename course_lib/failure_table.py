"""The source's failure table, 常见失败与定位方法: symptom → likely cause → what to check first.

One table, used twice: `drills` asks the learner to pick a row and its first check for a recorded
broken trace, and `evaluation` names the rows whose symptom an evaluation trace shows. The rows
keep the source's symptom text beside the course's words.
"""

from __future__ import annotations

from dataclasses import dataclass

from course_lib.lang import say


@dataclass(frozen=True)
class Row:
    """One row of the source's table 常见失败与定位方法: symptom → likely cause → checks."""

    letter: str
    symptom: str
    source: str  # the row's symptom as the source writes it
    cause: str
    checks: tuple[str, str, str]


DIAGNOSIS_ROWS: tuple[Row, ...] = (
    Row("A", "answers without calling a tool, and makes things up", "不调用工具就编答案",
        "the tool's description is unclear, or the instructions let the model guess",
        ("call trace", "when-to-use conditions", "eval samples")),
    Row("B", "keeps choosing the wrong tool", "总是选错工具",
        "tools with overlapping jobs, or too many exposed at once",
        ("tool names", "counter-examples", "dynamic tool set")),
    Row("C", "arguments are often invalid", "参数经常不合法",
        "the schema is too loose or its field descriptions are vague",
        ("strict mode", "enums", "field descriptions")),
    Row("D", "the tool succeeded but the answer is wrong", "工具成功但回答错误",
        "unclear output fields, or the result did not get back to the model correctly",
        ("call_id", "output structure", "full context")),
    Row("E", "a tool failed and the model carried on guessing", "工具失败后继续猜",
        "the error was swallowed, or there is no failure policy",
        ("error classification", "retryable", "stop condition")),
    Row("F", "a write was executed twice", "写操作被执行两次",
        "a blind retry after a timeout",
        ("idempotency key", "execution record", "status query")),
    Row("G", "latency and cost are too high", "延迟和成本过高",
        "too many tools, outputs that are too long, too many rounds",
        ("tokens", "tool time", "loop count")),
    Row("H", "fine in tests, over-reaching in production", "测试正常但线上越权",
        "the tests only covered the schema",
        ("identity", "resource scope", "approval and audit")),
)  # fmt: skip
ROWS = {row.letter: row for row in DIAGNOSIS_ROWS}

CAUSES_ZH = {
    "A": "工具描述不清楚，或者指令允许模型猜测",
    "B": "工具职责重叠，或者一次暴露的工具太多",
    "C": "schema 太宽松，或者字段描述含糊",
    "D": "输出字段不清楚，或者结果没有正确交回模型",
    "E": "错误被吞掉了，或者没有失败策略",
    "F": "超时之后盲目重试",
    "G": "工具太多、输出太长、轮数太多",
    "H": "测试只覆盖了 schema",
}
"""Each row's likely cause in Chinese, for the zh-CN edition (its symptom is the source's own, `Row.source`)."""


def show_diagnosis_table() -> None:
    """Print the table: letter, symptom, likely cause and the three things to check."""
    for row in DIAGNOSIS_ROWS:
        print(say(f"{row.letter}  {row.symptom}  ({row.source})", f"{row.letter}  {row.source}"))
        print(say(f"   likely cause: {row.cause}", f"   可能原因：{CAUSES_ZH[row.letter]}"))
        print(say(f"   check first:  {' · '.join(row.checks)}", f"   首先要查：{' · '.join(row.checks)}"))
