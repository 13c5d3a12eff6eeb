"""A question's key terms: its words minus stop words, chit-chat and numbers, matched by stem.

The notes assistant searches with these terms and checks whether the notes it read mention them.

Chinese has no spaces between words. A Chinese question is cut into words by a real segmenter
(`course_lib.chinese_words`: jieba's dictionary, with the course's concepts of `ZH_TERMS` added so
each stays one word: 幂等键, 智能体循环, …; one term per concept as in `notebooks/zh-CN/GLOSSARY.md`,
plus common variants), and Chinese function words (`_ZH_STOP`) are dropped. `key_terms` keeps each
concept in its glossary form (审批 → 批准, 失败的 → 失败) and any other word of two or more characters
as written ("量子计算"; neighbouring words of the question's own are one topic), never a fragment
such as "户先" that a table cut out of "用户先批准": a Chinese question is searched in Chinese, and
the notes search matches it by character bigrams (`course_lib.words.tokens`), so the zh-CN edition's
Chinese notes are found, read and quoted.

Notes written in English hold none of those bigrams. `bridged_terms` gives the same question's
concepts as the English words the English notes use (幂等键 → idempotency key): the assistant
searches with them when the Chinese search finds nothing. A run the table does not know stays as
written there too, so an unknown topic gets "evidence missing", never a guess. A real model
translates a query itself; this table is the offline model's stand-in, and it knows only what is
listed here.
"""

from __future__ import annotations

import re

from course_lib.chinese_words import Segmenter
from course_lib.words import WORD as _WORD
from course_lib.words import stem as _stem
from course_lib.words import tokens as _tokens

_STOP_WORDS = frozenset("""
    a an the and or but if then than so as of to in on at by for with from into about over under between
    don doesn didn isn aren wasn weren won couldn shouldn wouldn haven hasn ll ve re
    is are was were be been being am do does did done have has had having get gets got
    i me my mine myself we us our you your yours it its they them their he she his her
    this that these those there here what which who whom whose when where why how whether
    can could should would will shall may might must need needs not no nor yes
    very just also only too more most much many some any all each every other another such own same
    please tell show explain describe give find search look list summarize summarise recall remind
    know knew known understand understanding learn learned mean means meaning think say says said
    note notes vs versus difference differences compare comparison
    gap gaps learning save saving incomplete weak missing yet still again top up least first
""".split())
_CHAT_WORDS = frozenset("""
    hi hello hey thanks thank cheers bye goodbye morning afternoon evening great helpful nice awesome
    cool ok okay welcome today lot doing going fine good
""".split())


# Chinese concept → the English words the notes use for it (longest Chinese term wins).
ZH_TERMS: dict[str, str] = {
    "幂等键": "idempotency key", "幂等性键": "idempotency key", "幂等性": "idempotency", "幂等": "idempotency",
    "批准": "approval", "审批": "approval", "审核": "approval", "同意": "consent",
    "重试": "retries", "指数退避": "exponential backoff", "退避": "backoff", "抖动": "jitter", "超时": "timeout",
    "并行调用": "parallel calls", "并发调用": "parallel calls", "并行": "parallel", "并发": "concurrently",
    "严格模式": "strict mode", "提示词注入": "prompt injection", "提示注入": "prompt injection",
    "流式工具调用": "streaming tool calls", "流式": "streaming", "增量": "deltas",
    "智能体循环": "agent loop", "代理循环": "agent loop", "智能体": "agent", "代理": "agent",
    "工作流": "workflow", "工具调用": "tool calls", "工具选择": "tool_choice",
    "协议错误": "protocol errors", "工具错误": "tool errors", "错误": "errors",
    "评估指标": "evaluation metrics", "评估": "evaluation", "指标": "metrics",
    "规则": "rule", "值": "value", "结果": "result", "声明": "declaration", "参数": "arguments",
    "副作用": "side effects", "写入": "write", "写操作": "write", "输出": "output", "上下文": "context",
    "工具": "tool", "调用": "call", "模型": "model", "服务器": "server", "客户端": "client", "应用": "app",
    "请求": "request", "响应": "response", "关联域": "correlation domains", "关联": "correlation",
    "文本": "text", "返回": "returned", "保证": "guarantees", "数据": "data", "失败": "failures", "成功": "success",
    "执行": "run", "运行": "run", "读取": "read", "文件": "file", "路径": "path", "键": "key", "写": "write",
    "不可信": "untrusted", "指令": "instruction", "预算": "budget", "状态": "state", "停止条件": "stop condition",
    "失败的": "failed",  # "失败的 Pod" is failed pods, not failures (the notes' word for what went wrong is "failed")
    "观察": "observation", "退避": "backoff", "轨迹": "trace", "引用": "citation",
}  # fmt: skip
# A variant → the glossary's form, which is what the Chinese notes write (`key_terms` searches with it).
_ZH_VARIANTS = {
    "幂等性键": "幂等键", "幂等性": "幂等", "审批": "批准", "审核": "批准", "提示注入": "提示词注入", "并发调用": "并行调用",
    "代理循环": "智能体循环", "代理": "智能体", "写操作": "写入", "失败的": "失败",
}  # fmt: skip
# Chinese function words, question words and chit-chat: never key terms (the twin of _STOP_WORDS).
_ZH_STOP = frozenset("""
    什么 什么是 是 的 了 吗 呢 吧 啊 呀 么 我 你 他 她 它 我们 你们 他们 请 请问 帮我 帮 告诉 解释 一下 说明 介绍
    讲讲 讲 说说 如何 怎么 怎样 怎么样 为什么 为何 哪里 哪儿 哪些 哪个 哪 谁 和 与 跟 及 以及 或 或者 还是 在 有
    没有 没 不 要 会 能 能够 可以 应该 需要 这 那 这个 那个 这些 那些 之间 区别 差别 不同 有何 比较 对比 关于 笔记
    中 里 上 时 时候 理解 得 完整 不完整 保存 一个 学习 缺口 薄弱 知道 掌握 意思 含义 重要 作用 用 用途 搜索 查找
    找 总结 列出 给 看 几 条 篇 最 多 最多 前 个 对 把 被 让 就 都 也 还 又 再 很 更 做 原理 机制 如果 那么 因为 所以
    但是 可是 地 着 过 你好 您好 谢谢 多谢 再见 好 早上好 晚上好 太好了 有用 记录 一 二 两 三 四 五 六 七 八 九 十
    发生 关系 联系 影响 使用 区分 属于 为 能否 是否 时机 情况 场景 问题 事 东西 方面 部分 内容
    之 其 而 并 且 从 到 向 当 该 此 每 各 哪一 对于 一些 一种 还有 具体 例子 举例 呢 嗯 下 吗 么 记 已 写
    必须 成为 足以 来 解决 处理 通过 设为 设成 一次 两次 到底 究竟 什么时候 时间 要求 不知道 防止 避免 系统
    帮助 有帮助 找出 找到 怎么办 哪些 还有什么 什么样 怎么样 为啥 干什么 一些 所有 全部 东西 一起
""".split())
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def _chinese_terms(run: str, bridge: bool = False) -> list[tuple[int, str]]:
    """(offset, term) in a run of Chinese characters, cut into words by the segmenter
    (`course_lib.chinese_words`, with the concepts of `ZH_TERMS` in its dictionary): a concept in its
    glossary form (with `bridge`, as its English words); a stop word, a count ("五条") or a single
    character dropped; other words kept as written, neighbours joined into one topic ("量子" + "计算"
    → "量子计算"). "用户先批准" → 用户, 批准: never a non-word such as "户先"."""
    found: list[tuple[int, str]] = []
    joined = False  # the last term found is a word of the question's own, which a next one may extend
    for at, word in _SEGMENTER.chinese_words(run):
        if word in ZH_TERMS:
            found += [(at, _ZH_VARIANTS.get(word, word))] if not bridge else [(at, e) for e in ZH_TERMS[word].split()]
            joined = False
        elif word in _ZH_STOP or len(word) < 2 or _COUNT.fullmatch(word):
            joined = False
        elif joined and found and found[-1][0] + len(found[-1][1]) == at:
            found[-1] = (found[-1][0], found[-1][1] + word)
        else:
            found.append((at, word))
            joined = True
    return found


_SEGMENTER = Segmenter(sorted(ZH_TERMS, key=len, reverse=True))  # the concepts are words of their own
_COUNT = re.compile(r"[\d一二两三四五六七八九十百千几]+[条篇个次项份遍轮]?")


# Words that ask about a topic without naming one ("When should I *set* …", "how is A *different* from
# B", "stop a write from happening *twice*"). They are searched for like any key term, but a note
# that answers the question rarely repeats them, so the assistant never reports them as missing.
_ASKING_WORDS = frozenset("""
    set sets setting different differ differs happen happens happened enough stop stops twice once reach
    reaches work works working use used using make makes matter matters important way ways thing things
    到达 达到 做到 起作用 工作 用到 发挥 进行 带来 导致
""".split())  # the second line: the same asking words in Chinese
_ASKING_STEMS = frozenset(map(_stem, _ASKING_WORDS))
# One concept, two names in this course: a tool call is a `function_call`, its result goes back as
# `function_call_output`. A note that says "function calls" does mention tool calls.
_SAME_CONCEPT = {"tool": ("function",), "function": ("tool",), "result": ("output",), "output": ("result",),
                 "工具": ("函数",), "函数": ("工具",), "结果": ("输出",), "输出": ("结果",)}  # fmt: skip


def _stems(text: str) -> set[str]:
    """The text's tokens as the search index counts them: stems, and bigrams of Chinese runs."""
    return set(_tokens(text))


def mentions(found: set[str], term: str) -> bool:
    """Whether a text whose `_stems` are `found` mentions `term`: its stem, or for a Chinese term
    ("量子计算") every bigram of it, as the search index matched it."""
    return set(_tokens(term)) <= found


def concepts(text: str) -> list[str]:
    """The course concepts a Chinese text names, in the glossary's form and in order, each once:
    "智能体围绕一个目标保存状态" → ["智能体", "状态"] (what a Chinese follow-up question may blank)."""
    found = [term for run in _CJK_RUN.findall(text) for _, term in _chinese_terms(run)
             if _ZH_VARIANTS.get(term, term) in ZH_TERMS.keys() | set(_ZH_VARIANTS.values())]  # fmt: skip
    return list(dict.fromkeys(term for term in found if len(term) > 1))


def weight(term: str) -> int:
    """How many of the English notes' words a key term stands for: 智能体循环 is "agent loop", two, as
    the English question "agent loops" has two terms; any other term is one. So a Chinese question
    and its English twin need the same share of their concepts covered before the notes answer them."""
    return len(ZH_TERMS.get(term, "").split()) or 1


def unsaid(found: set[str], terms: list[str]) -> list[str]:
    """The `terms` a text whose `_stems` are `found` does not mention, and that are worth saying so:
    not a word that only asks (`_ASKING_WORDS`), not a concept the text names by its other name
    (`_SAME_CONCEPT`: tool / function, result / output). What "Your notes do not mention" lists."""
    return [term for term in terms if _stem(term) not in _ASKING_STEMS and not mentions(found, term)
            and not any(mentions(found, other) for other in _SAME_CONCEPT.get(term, ()))]  # fmt: skip


def key_terms(text: str) -> list[str]:
    """The question's key terms, in its own words: its words minus stop words, chit-chat and
    numbers, one per stem; Chinese concepts in the glossary's form.

    "What is the difference between call_id and the MCP id?" → ["call_id", "mcp", "id"];
    "审批为什么重要？" → ["批准"]; "幂等键怎么解决重复写入？" → ["幂等键", "重复", "写入"].
    """
    return _terms(text, bridge=False)


def bridged_terms(text: str) -> list[str]:
    """`key_terms` with each Chinese concept as the English words of the course's English notes:
    "幂等键为什么重要？" → ["idempotency", "key"]. English questions give the same as `key_terms`."""
    return _terms(text, bridge=True)


def _terms(text: str, bridge: bool) -> list[str]:
    lowered = text.lower()
    words = [(m.start(), m.group()) for m in _WORD.finditer(lowered)]
    words += [(m.start() + at, term) for m in _CJK_RUN.finditer(lowered)
              for at, term in _chinese_terms(m.group(), bridge)]  # fmt: skip
    terms: dict[str, str] = {}
    for _, word in sorted(words, key=lambda pair: pair[0]):
        if word not in _STOP_WORDS and word not in _CHAT_WORDS and not word.isdigit() and len(word) > 1:
            terms.setdefault(_stem(word), word)
    return list(terms.values())
