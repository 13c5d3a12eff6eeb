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

    @property
    def text(self) -> str:
        """The symptom as the edition prints it: the course's English, or the source's own Chinese."""
        return say(self.symptom, self.source)


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
    "A": "工具描述不清楚，或者指令让模型去猜",
    "B": "工具的职责互相重叠，或者一次暴露的工具太多",
    "C": "schema 太宽松，或者字段描述含糊",
    "D": "输出字段不清楚，或者结果没有正确地回到模型那里",
    "E": "错误被吞掉了，或者没有失败策略",
    "F": "超时之后的盲目重试",
    "G": "工具太多、输出太长、轮数太多",
    "H": "测试只覆盖了 schema",
}
"""Each row's likely cause in the zh-CN edition (the symptom is the source's own, `Row.source`)."""
CHECKS_ZH = {
    "call trace": "调用轨迹", "when-to-use conditions": "何时使用的条件", "eval samples": "评估样例",
    "tool names": "工具名", "counter-examples": "反例", "dynamic tool set": "动态工具集",
    "strict mode": "严格模式", "enums": "枚举", "field descriptions": "字段描述",
    "call_id": "call_id", "output structure": "输出结构", "full context": "完整上下文",
    "error classification": "错误分类", "retryable": "可否重试", "stop condition": "停止条件",
    "idempotency key": "幂等键", "execution record": "执行记录", "status query": "状态查询",
    "tokens": "token 数", "tool time": "工具耗时", "loop count": "循环次数",
    "identity": "身份", "resource scope": "资源范围", "approval and audit": "批准与审计",
}
"""A Chinese gloss for each check; the check itself stays as written: a drill's answer names it."""


def show_diagnosis_table() -> None:
    """Print the table: letter, symptom, likely cause and the three things to check.

    In the zh-CN edition (`lang.say`) the symptom is the source's own Chinese, the cause is
    Chinese, and each check keeps its English name (what a drill's answer writes) with a gloss.
    """
    for row in DIAGNOSIS_ROWS:
        glossed = " · ".join(check if CHECKS_ZH[check] == check else f"{check}（{CHECKS_ZH[check]}）"
                             for check in row.checks)  # fmt: skip
        print(say("{letter}  {symptom}  ({source})", "{letter}  {source}", letter=row.letter, symptom=row.symptom,
                  source=row.source))
        print(say("   likely cause: {cause}", "   可能的原因：{cause_zh}", cause=row.cause, cause_zh=CAUSES_ZH[row.letter]))
        print(say("   check first:  {checks}", "   先检查：{glossed}", checks=" · ".join(row.checks), glossed=glossed))
