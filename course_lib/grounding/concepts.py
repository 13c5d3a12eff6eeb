"""The words the meaning check knows: concepts with their English and Chinese names, opposites,
negations and the words that carry no claim.

A concept is one idea however it is written: "concurrently", "in parallel", "at the same time" and
并发 / 同时 are CONCURRENT. Its opposite is what a reversed sentence says instead: "must wait" /
必须等待 (WAIT) where the note says "can run concurrently". The table covers what the course's notes
talk about (tool calls, errors, retries, approval, ids, …) and the plain words people use for it;
a word it does not know is its own concept (its stem, or the Chinese word as the segmenter cut it),
so a claim about anything else is compared word for word. That is the limit of this table, and
`README` says so: it sees the same idea in the words listed here, not in every word of the language.
"""

from __future__ import annotations

# ---- concepts ------------------------------------------------------------------------------------
# One line per concept: NAME: English words or phrases | Chinese words. A single English word is
# matched by its stem (course_lib.words.stem: "retries" = "retry"); a phrase is matched as written.
_TABLE = """
CONCURRENT: concurrently, concurrent, parallel, in parallel, simultaneously, simultaneous, at the same time, together, at once, side by side, overlap, overlapping, overlaps | 并发, 并行, 同时, 一起, 同一时刻, 重叠
WAIT: wait, waits, waiting, sequentially, sequential, serially, serial, in sequence, one after another, one at a time, one by one, in turn, hold off, block | 等待, 等, 依次, 串行, 按顺序, 一个接一个, 先后
INDEPENDENT: independent, independently, unrelated | 独立, 相互独立, 互不依赖, 互相独立
DEPEND: depend, depends, dependent, rely, relies, needs the result, need the result, needs the output, uses the result | 依赖, 取决于, 需要另一步结果
SAME: same, identical, equal, one and the same, shared, the same | 同一, 相同, 同样, 同一个, 一样, 相等, 共用
DIFFERENT: different, differ, distinct, another, other, separate | 不同, 不一样, 另一个, 别的
ALWAYS: always, every time, each time, every, all, whatever, no matter, regardless | 总是, 每次, 永远, 每个, 每一个, 所有, 任何, 全部, 不管
ONLY: only, solely, just, exclusively, nothing but, all a, all it, all that, all this | 只, 只有, 仅, 仅仅, 只是
BEFORE: before, first, prior, earlier, ahead of, beforehand | 之前, 先, 以前, 事先, 首先
AFTER: after, then, later, afterwards, following | 之后, 然后, 以后, 随后, 接着
SUCCEED: succeed, success, successful, successfully, works, worked, ok | 成功, 顺利
FAIL: fail, fails, failed, failure, failures, error, errors, broken | 失败, 出错, 错误, 故障
RETRY: retry, retries, retried, another attempt, another try, one more try, try again, tried again, repeat, repeated, again, re-run, rerun | 重试, 再试, 再试一次, 重复, 重新尝试, 再来一次, 再
RECOVER: recover, recoverable, recovery, transient, temporary | 恢复, 可恢复, 暂时性, 暂时
PERMANENT: permanent, permanently, same way every time | 永久, 每次都会以同样的方式失败
DATA: data, content, plain text | 数据, 内容
INSTRUCTION: instruction, instructions, command, commands, order, orders | 指令, 命令
TEXT: text, string, serialized, serialised | 文本, 字符串, 文字
OBJECT: object, dict, dictionary | 对象, 字典
TRUSTED: trusted, trustworthy, safe | 可信, 可信任, 安全
UNTRUSTED: untrusted, untrustworthy, unsafe, external, outside | 不可信, 外部, 不可信任
READ: read, reads, reading, look at | 读取, 读, 阅读, 读过
WRITE: write, writes, writing, written, save, saves, store, stores, stored, modification, side effect | 写入, 写, 保存, 存, 修改, 副作用
RUN: run, runs, ran, execute, executes, executed, execution, perform, invoke, invoked, carry out, take effect, takes effect, happen, happens | 运行, 执行, 调用执行, 生效, 发生
APPROVE: approve, approved, approval, consent, permission to proceed, sign off, confirm, confirmation | 批准, 同意, 确认, 点头
REFUSE: refuse, refused, reject, rejected, deny, denied, block, blocked, forbidden | 拒绝, 拦下, 禁止, 驳回
PERSON: person, human, user, people | 人, 用户, 一个人
MODEL: model, llm | 模型
APP: app, application, host, host application | 应用, 主机, 主机应用, 应用程序
SERVER: server, servers | 服务器
CLIENT: client, clients | 客户端
TOOL: tool, tools, function, functions | 工具, 函数
CALL: call, calls, calling, called, request a call | 调用, 调用请求
RESULT: result, results, output, outputs, outcome, return value | 结果, 输出, 结局
RETURN: return, returns, returned, come back, comes back, send back, sends back, sent back, carry back, carries back, fed back, feed back, goes back, go back | 返回, 带回, 发回, 反馈, 回来
SEND: send, sends, sent, pass, passes, forward | 发送, 发出, 传, 发给
RECEIVE: receive, receives, received, get, gets, arrive, arrives, arrived, reach, reaches, reached, get to, got to, make it to | 收到, 到达, 接收, 得到
ARGUMENT: argument, arguments, parameter, parameters, params, input | 参数, 输入
SCHEMA: schema, json schema, inputschema | schema, 模式定义
DECLARATION: declaration, declare, declared, definition | 声明
RULE: rule, rules | 规则
VALUE: value, values | 值
KEY: key, keys | 键
IDEMPOTENCY: idempotency, idempotent | 幂等, 幂等性
ID: id, ids, identifier | 标识, 编号
LINK: link, links, linked, connect, connects, pair, pairs, paired, match, matches, tie, ties | 联系, 对应, 配对, 配成一对, 关联
DOMAIN: domain, domains | 域, 关联域
TIMEOUT: timeout, timeouts, time out, timed out | 超时
BUDGET: budget, budgets, limit, limits, cap, caps, bound, bounded, maximum | 预算, 上限, 限制, 有界
BACKOFF: backoff, back off, exponential backoff | 退避, 指数退避
JITTER: jitter, randomness, random delay | 抖动
GUARANTEE: guarantee, guarantees, ensure, ensures, promise, constrain, constrains, constrained, enforce, enforces | 保证, 约束, 确保
TELL: tell, tells, judge, judges, decide, decides, determine, determines, know, knows, check whether, say whether | 判断, 决定, 知道, 确定
CHECK: check, checks, checked, validate, validates, validated, verify, verifies, verified, validation | 检查, 校验
NEED: need, needs, needed, require, requires, required, necessary, must have | 需要, 必须, 必要, 必要条件
ENOUGH: enough, sufficient, suffice, suffices | 足够, 充分, 足以, 够, 充分条件
AGENT: agent, agents | 智能体, 代理
LOOP: loop, loops | 循环
STOP: stop, stops, stopped, halt, end, ends, pause, pauses | 停止, 停下, 叫停, 结束, 暂停
CONDITION: condition, conditions | 条件
STATE: state | 状态
GOAL: goal, goals, objective | 目标
OBSERVE: observe, observation, observations, observing | 观察
CHOOSE: choose, chooses, choose, chose, pick, picks, select, selects, decide | 选择, 选, 挑选
STEP: step, steps, stage | 步, 步骤, 一步
SEARCH: search, searches, searched, searching, look up, look for, find | 搜索, 查找, 检索
NOTE: note, notes | 笔记
HIT: hit, hits, match, matches, result of the search | 命中
PROTOCOL: protocol | 协议
CODE: code, codes | 错误码, 代码
MESSAGE: message, messages | 消息, 信息
CONTEXT: context | 上下文
RESPONSE: response, responses, reply | 响应
REQUEST: request, requests | 请求
TRACE: trace, traces, log, record which | 轨迹, 记录
RECORD: record, records | 记录
EVIDENCE: evidence, support, supports, supported | 证据, 支持
CITE: cite, cites, cited, citation, citations, source, sources | 引用, 来源
QUESTION: question, questions | 问题
ANSWER: answer, answers, answered, reply | 回答, 答复
ACTION: action, actions, operation | 动作, 操作
EXACT: exact, exactly, precise, specific | 确切, 准确, 具体
BIND: bind, binds, bound to, tied to, attached to | 绑定
EXPIRE: expire, expires, expired, used up, use up, uses up | 过期, 用掉
REUSE: used again, use again, reused, reuse, reusable, used more than once | 再次使用, 重复使用, 复用
INJECT: inject, injected, injection | 注入
PROMPT: prompt, prompts | 提示词, 提示
EXPOSE: expose, exposes, offer, offers, give access | 暴露, 提供
BOUNDARY: boundary, boundaries, line of defence | 边界
DEFENCE: defence, defences, defense, defenses, protection | 防御, 防御办法
IGNORE: ignore, ignores, disregard | 忽略
OBEY: obey, obeys, follow, follows, comply, act on | 听从, 服从, 遵从
STREAM: stream, streaming, streamed | 流, 流式
DELTA: delta, deltas, piece, pieces, chunk, chunks | 增量, 片段
SHAPE: shape, structure, format | 形状, 结构, 格式
PERMISSION: permission, permissions, access, authorize, authorized, authorization, allowed | 权限, 授权, 访问权限
BUSINESS: business | 业务
FIELD: field, fields, property, properties | 字段, 属性
OPTIONAL: optional | 可选
NULL: null, none | null, 空
UNION: union | 联合, 联合类型
LIST: list, listed, lists | 列表, 列出
CORRECT: correct, valid, right, legal, accurate | 正确, 合法
INVALID: invalid, malformed, wrong, illegal, incorrect | 非法, 错误的, 格式错误, 不合法
EXTRA: extra, additional, unexpected | 多余, 额外
APPEAR: appear, appears, show up, shows up, occur | 出现
PARSE: parse, parses, parsed, parsing, decode | 解析
DISCOVER: discover, discovers, discovery, find out | 发现
STANDARDIZE: standardize, standardizes, standardise, defines how, specifies | 规定, 标准化
REPLACE: replace, replaces, stand in for, take the place of, substitute | 取代, 替代, 代替, 替换
CONFLICT: conflict, conflicts, clash | 冲突
REPLAY: replay, replays, replayed | 重放
HASH: hash, hashes, digest | 哈希
FILL: fill, fills, filled, fill in, fills in, set, sets, provide, provides, supply | 填写, 填, 填入, 设置
CONTAIN: contain, contains, hold, holds, include, includes, carry, carries | 包含, 有, 带着, 含有
KEEP: keep, keeps, kept, preserve, retain | 保留, 保存下来, 保持
WHOLE: whole, full, entire, complete | 完整, 全部, 整个
TURN: turn, turns, round, rounds | 轮, 一轮
ORDER: order, sequence | 顺序, 次序
OWN: own, its own, their own | 各自, 它自己的
TIME: time, instant, moment | 时刻, 时间
ATTEMPT: attempt, attempts, try, tries | 尝试, 次数
REPORT: report, reports, reported, say which, tell which | 报告
BLANKET: blanket, allow all, all modifications | 笼统, 允许所有修改
PREVIEW: preview, previews | 预览
CHANGE: change, changes, changed, vary, varies | 变, 改变, 变化, 变了
STAY: stay the same, stays the same, remain the same, remains the same, unchanged, stays, remains | 不变, 保持不变, 一样
ALLOW: allow, allows, permit, permits, permitted, through, pass through, let through | 放行, 允许
SHOW: show, shows, display, displays, present | 展示, 显示
WORTH: worth, deserve, deserves, merit, merits, worthwhile | 值得
""".strip()

# Pairs of opposites: a claim that puts one where the note says the other says the opposite.
OPPOSITES = (
    ("CONCURRENT", "WAIT"), ("INDEPENDENT", "DEPEND"), ("SAME", "DIFFERENT"), ("ONLY", "ALWAYS"),
    ("SUCCEED", "FAIL"), ("RECOVER", "PERMANENT"), ("DATA", "INSTRUCTION"),
    ("TEXT", "OBJECT"), ("TRUSTED", "UNTRUSTED"), ("READ", "WRITE"), ("APPROVE", "REFUSE"),
    ("CORRECT", "INVALID"), ("MODEL", "APP"), ("SAME", "OWN"), ("ALLOW", "STOP"), ("ALLOW", "REFUSE"), ("CHANGE", "STAY"), ("EXPIRE", "REUSE"),
)
"""MODEL / APP: the course's two actors; "the app fills in the key" and "the model fills in the key" are
opposite claims about who does it (a note that names both, as most do, never meets this check)."""

# A negated concept that has an opposite is that opposite: "not concurrently" is WAIT, "not the same" is
# DIFFERENT, "does not depend" is INDEPENDENT. These do not flip that way (negating them says less than
# their opposite): "not only" is not "always", "did not read" is not "wrote", "not the app" is not "the model".
NO_FLIP = frozenset({"ONLY", "ALWAYS", "READ", "WRITE", "MODEL", "APP", "OWN", "STOP"})

NEGATORS_EN = frozenset("not no zero never cannot nothing none neither nor without nobody".split())
DETERMINERS = frozenset("a an the any this that these those its their our your some no 一个 一种 这个 那个 任何 一条 一篇".split())
NOUN_NEGATORS_ZH = frozenset("不是 并不是 算不上 谈不上 称不上 还不是 绝不是 不等于 并不等于".split())
"""A negation that reaches a noun phrase ("not an agent", "no stop conditions", 不是对象): what it negates
is a thing, not what happens, and "is not X" says the same wherever the words of X stand."""
NEGATOR_PHRASES_EN = ("instead of", "rather than", "as opposed to", "not even", "no longer", "in place of")
AFTER_NEGATORS_EN = frozenset("nothing none nobody".split())
"""A negator that follows its verb: "parsing executes nothing" negates "executes"."""
NEGATORS_ZH = frozenset("""
    不 没 没有 无 无法 不能 不会 不是 不要 不得 绝不 绝不能 从不 从来不 永远不 永不 别 勿 未 并非 并不 非 不再
    不可 不必 不用 毫无 并没有 绝不是 还不 还没有 尚未 不等于 而不是 而非 并不是 不是由 绝不由 算不上 谈不上 称不上 并不等于 就不
""".split())
"""Words that turn what follows them (in their clause) into its negation. 不同 (different) and 不可信
(untrusted) are words of their own in the segmenter's dictionary, so they are concepts, not negations."""

# Clause boundaries: polarity never crosses them, and a claim's clause is matched to a note's clause.
CLAUSE_WORDS_EN = ("but", "whereas", "while", "although", "though", "however", "so", "because", "even", "unless",
                   "otherwise", "since", "when", "whenever", "if", "until")  # fmt: skip
CLAUSE_WORDS_ZH = frozenset("但 但是 而 然而 而是 可是 否则 所以 因为 即使 哪怕 就算 尽管 于是 不过 而且 如果 只要 直到 一旦 当".split())

# Words that carry no claim of their own (besides the ones `course_lib.grounding` strips as frames).
STOP_EN = frozenset("""
    a an the and or of to in on for with is are was were be been being it its this that these those as by at from
    if so than can could may might must should would will shall do does did done your you my i we they there
    what which when how why into each up more most very also such has have had having about one two three
    them their our out just own per via both either whether yet still even here itself themselves
    let lets make makes made way ways thing things something kind kinds case cases example instance
    become becomes became becoming
    use used using uses get gets got going able really actually basically essentially simply
    him his her she he me us
""".split())
STOP_ZH = frozenset("""
    的 了 吗 呢 吧 啊 呀 么 是 在 和 与 跟 及 以及 或 或者 还是 这 那 这个 那个 这些 那些 它 它们 他 她 他们 我 你 你们 我们
    就 都 也 还 又 很 更 把 被 让 给 对 从 到 向 当 该 此 其 之 而 并 且 要 会 能 能够 可以 应该 可能 得 地 着 过 所 为 以
    一 一个 一种 一些 一次 两 两个 两次 三 几 个 里 中 上 下 时 时候 之内 之间 这样 那样 什么 怎么 怎样 如何 是否 到底
    已经 已 正在 就是 即 比如 例如 像 等等 本身 东西 方式 那段 那篇 这篇 那条 这条 一条 一篇 一封 一样地 成为 作为 变成 做 自己 还有 其中
""".split())

# Frames and pleasantries: a sentence made only of these (and stop words) is not a claim about the notes.
CHAT_EN = frozenset("""
    hope help helps helpful happy glad let know ask asking question questions anything else more need needs want wants
    like sure great feel free here found find what notes note say says said according based summary summarize
    following below above these answer answers hi hello thanks thank welcome good luck cheers ok okay just
    certainly course absolutely pleasure enjoy reach clarify further detail details elaborate explain additional
    look looked check checked read searched search information info learn learning topic best regards
    i'm you're that's here's there's let's it's i've you'd i'd anytime always
""".split())
CHAT_ZH = frozenset("""
    希望 帮助 有帮助 如果 还 还有 需要 别的 随时 告诉 问题 尽管 问 更多 内容 的话 再 叫 就好 找到 这些 笔记 根据 以下 找 看
    我 你 您 里 了 这 对 很 会 有 可以 继续 欢迎 谢谢 好 好的 当然 乐意 高兴 其他 任何 请 吧 啊 哦 嗯 读 读过 搜索 一下
    详细 说明 解释 进一步 补充 下面 如下 内容如下 总结 以上 结果如下 信息 是 的 在 就 也 都 想 要 随时 问我
""".split())


THINGS = frozenset("""
    MODEL APP SERVER CLIENT TOOL CALL RESULT ARGUMENT SCHEMA DECLARATION RULE VALUE KEY ID DOMAIN BUDGET PERSON NOTE
    HIT PROTOCOL CODE MESSAGE CONTEXT RESPONSE REQUEST TRACE RECORD QUESTION ANSWER ACTION AGENT LOOP CONDITION STATE
    GOAL STEP FIELD LIST SHAPE PERMISSION BOUNDARY DEFENCE PROMPT TEXT OBJECT DATA INSTRUCTION TIME ATTEMPT ORDER
    TIMEOUT BACKOFF JITTER STREAM DELTA BUSINESS NULL UNION EVIDENCE TURN PREVIEW HASH IDEMPOTENCY BLANKET REPLAY CONFLICT
""".split())
"""Concepts that are things (nouns): their polarity is that of a phrase ("not an agent"), compared as a whole."""


def _parse(table: str) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(English word stem → concept, English phrase → concept, Chinese word → concept)."""
    from course_lib.words import stem

    words, phrases, chinese = {}, {}, {}
    for line in table.splitlines():
        name, _, forms = line.partition(":")
        english, _, zh = forms.partition("|")
        for form in (f.strip().lower() for f in english.split(",") if f.strip()):
            if " " in form or "-" in form:
                phrases.setdefault(form, name)
            else:
                words.setdefault(stem(form), name)
        for form in (f.strip() for f in zh.split(",") if f.strip()):
            chinese.setdefault(form, name)
    return words, phrases, chinese


WORDS_EN, PHRASES_EN, WORDS_ZH = _parse(_TABLE)
WORDS_ZH.update({"实参": "ARGUMENT", "验证": "CHECK", "服务端": "SERVER", "审批": "APPROVE"})
"""Words the glossary keeps out of the course's own Chinese, which a model may still write: read, never written."""
OPPOSITE: dict[str, frozenset[str]] = {}
for _a, _b in OPPOSITES:
    OPPOSITE[_a] = OPPOSITE.get(_a, frozenset()) | {_b}
    OPPOSITE[_b] = OPPOSITE.get(_b, frozenset()) | {_a}
FLIP = {a: b for a, b in reversed(OPPOSITES)} | {b: a for a, b in reversed(OPPOSITES)}
"""What a negated concept becomes: its first opposite in the table ("not the same" is DIFFERENT)."""
