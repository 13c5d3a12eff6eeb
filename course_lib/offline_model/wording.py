"""Everything the offline model says, in English and in Chinese: one table of templates.

The model answers in the language of the request: `language` reads the latest user message, and
`say(key, lang, **fields)` fills the template for that language. The English templates are the
course's stored outputs (notebooks and fixtures depend on them byte for byte); each Chinese
template says the same thing, no more: it quotes the same tool output and refuses the same guesses.
Wire values (error codes, tool names, paths, `tool_choice`) stay as they are in both languages.
"""

from __future__ import annotations

import re

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CODE = re.compile(r"`[^`]*`")


def language(text: str) -> str:
    """"zh" when the message holds Chinese characters outside `code` spans, else "en".
    (Paths are read as ASCII only, so a path never makes a message Chinese.)"""
    return "zh" if _CJK.search(_CODE.sub("", text)) else "en"


_TEXT: dict[str, dict[str, str]] = {
    # ---- what a read asked for (answers) ----
    "head_one": {"en": "the first line of {path}", "zh": "{path} 的第一行"},
    "head_n": {"en": "the first {n} lines of {path}", "zh": "{path} 的前 {n} 行"},
    "tail_one": {"en": "the last line of {path}", "zh": "{path} 的最后一行"},
    "tail_n": {"en": "the last {n} lines of {path}", "zh": "{path} 的最后 {n} 行"},
    "whole": {"en": "the contents of {path}", "zh": "{path} 的全部内容"},
    "with_range": {"en": "{path} with {kind} {value}", "zh": "{path}（{kind} 为 {value}）"},
    # ---- a result ----
    "read_ok": {"en": "Here {be} {what}, as returned by {tool}:\n\n{text}", "zh": "以下是 {what}，由 {tool} 返回：\n\n{text}"},
    # a span of lines the call could not carry, cut from what the tool returned (answers._describe_span)
    "lines_cut": {"en": "Here are lines {first} to {last} of {path}, cut from what {tool} returned (it cannot read only "
                        "those lines):\n\n{text}",
                  "zh": "以下是 {path} 的第 {first} 到第 {last} 行，从 {tool} 返回的内容中截取（它不能只读这几行）：\n\n{text}"},
    "line_cut": {"en": "Here is line {first} of {path}, cut from what {tool} returned (it cannot read only that "
                       "line):\n\n{text}",
                 "zh": "以下是 {path} 的第 {first} 行，从 {tool} 返回的内容中截取（它不能只读这一行）：\n\n{text}"},
    "ends_at": {"en": "\n\n{path} has only {count} lines as {tool} returned it.",
                "zh": "\n\n按 {tool} 返回的内容，{path} 只有 {count} 行。"},
    "past_end": {"en": "{path} has only {count} lines as {tool} returned it, so there is no line {first}.",
                 "zh": "按 {tool} 返回的内容，{path} 只有 {count} 行，没有第 {first} 行。"},
    "past_end_one": {"en": "{path} has only 1 line as {tool} returned it, so there is no line {first}.",
                     "zh": "按 {tool} 返回的内容，{path} 只有 1 行，没有第 {first} 行。"},
    "returned": {"en": "Here is what {tool} returned for {target}:\n\n{text}",
                 "zh": "以下是 {tool} 针对 {target}返回的内容：\n\n{text}"},
    "change_to": {"en": "the change to {path}", "zh": "{path} 的修改"},
    "no_text": {"en": "{tool} returned no text for {target}.", "zh": "{tool} 没有针对 {target}返回任何文本。"},
    "asked_read": {"en": "when asked for {what}", "zh": "在被要求读取 {what}时"},
    "asked_args": {"en": "for {arguments}", "zh": "在处理参数 {arguments} 时"},
    "asked_change": {"en": "when asked to change {path}", "zh": "在被要求修改 {path} 时"},
    "error_head": {"en": "The tool {tool} reported an error {asked}.", "zh": "工具 {tool} {asked}报告了错误。"},
    "error_code": {"en": "Error code: {code}", "zh": "错误代码：{code}"},
    "error_message": {"en": "Error message: {message}", "zh": "错误信息：{message}"},
    "not_read": {"en": "I could not read the file, so I won't say anything about what it contains.",
                 "zh": "我没能读取这个文件，所以不会对它的内容作任何说明。"},
    "no_result": {"en": "I got no result from it, so I won't guess one.", "zh": "我没有从它那里得到结果，所以不会猜测结果。"},
    "not_saved": {"en": "The change was not made: nothing was saved.", "zh": "修改没有完成：什么都没有保存。"},
    "unconfirmed": {"en": "The change was not confirmed, so it may or may not have been saved; I won't report it as saved.",
                    "zh": "这次修改没有得到确认，它可能已经保存，也可能没有；我不会把它报告为已保存。"},
    "next": {"en": "What to try next: {step}", "zh": "下一步：{step}"},
    "paragraph_break": {"en": "\n\n", "zh": "\n\n"},
    "not_in_results": {"en": "not in the tool results", "zh": "工具结果里没有"},
    # ---- thinking (Anthropic's thinking blocks): the plan said plainly ----
    "think_call": {"en": "I call {tool} with {arguments}.", "zh": "我调用 {tool}，参数是 {arguments}。"},
    "think_answer": {"en": "The tool results are in: I answer from them and nothing else.",
                     "zh": "工具结果已经回来了：我只根据它们回答。"},
    "think_reply": {"en": "No tool call fits this request: I reply in words.", "zh": "这个请求用不上工具调用：我直接用文字回答。"},
    # ---- no call made (plan) ----
    "and": {"en": " and ", "zh": " 和 "},
    "list_sep": {"en": ", ", "zh": "、"},
    "contents_one": {"en": "what it contains", "zh": "它的内容"},
    "contents_many": {"en": "what they contain", "zh": "它们的内容"},
    "tools_off": {"en": "To answer I would need to read {paths} with a tool, but tool use is turned off for "
                        'this request (tool_choice is "none"). I won\'t guess {contents}.',
                  "zh": '要回答这个问题，我需要用工具读取 {paths}，但这次请求关闭了工具调用（tool_choice 为 "none"）。'
                        "我不会猜测{contents}。"},
    "no_reader": {"en": "I can't read {paths}: no file-reading tool is available for this request, and "
                        "I won't guess {contents}.",
                  "zh": "我无法读取 {paths}：这次请求没有可用的文件读取工具，我也不会猜测{contents}。"},
    "which_file": {"en": "Which file should I read? Please give me its path; I won't guess one.",
                   "zh": "要读取哪个文件？请告诉我它的路径；我不会猜测路径。"},
    "offer_reader": {"en": "I can read a text file with {tool}: tell me its path and, if you like, which lines "
                           '(for example "the first 20 lines").',
                     "zh": "我可以用 {tool} 读取文本文件：告诉我它的路径，如果需要，再说明读取哪些行（例如“前 20 行”）。"},
    "offer_none": {"en": "No file-reading tool is available for this request, so there is nothing I can look up.",
                   "zh": "这次请求没有可用的文件读取工具，所以我没有可以查询的内容。"},
    "intro": {"en": "I'm an offline teaching model: I follow fixed rules and only answer from what a tool returns. ",
              "zh": "我是一个离线教学模型：我遵循固定的规则，只根据工具返回的内容回答。"},
    # ---- the notes assistant ----
    "chat_reply": {"en": "I answer questions from your notes: name a topic and I will search them, read the best "
                         "matches and cite the notes I used. There is nothing to look up in this message, so I called no tool.",
                   "zh": "我根据你的笔记回答问题：说出一个主题，我会搜索你的笔记，阅读最匹配的几篇，并注明我用到的笔记。"
                         "这条消息里没有需要查询的内容，所以我没有调用工具。"},
    "evidence_missing": {"en": "The evidence is missing", "zh": "证据不足"},
    "evidence": {"en": "{missing}: {reasons}. I won't answer from memory.", "zh": "{missing}：{reasons}。我不会凭记忆回答。"},
    "reason_sep": {"en": "; ", "zh": "；"},
    "search_failed": {"en": "{tool} failed ({code}: {message}), so I could not look at your notes",
                      "zh": "{tool} 失败了（{code}：{message}），所以我没能查看你的笔记"},
    "no_hits": {"en": "searching your notes for {query!r} found no matching note",
                "zh": "在你的笔记中搜索 {query!r} 没有找到匹配的笔记"},
    "no_note_reader": {"en": "the search found {paths}, but I have no tool to read them",
                       "zh": "搜索找到了 {paths}，但我没有读取它们的工具"},
    "read_failed": {"en": "I could not read {path} ({code})", "zh": "我没能读取 {path}（{code}）"},
    "stub_reason": {"en": "{path} is only a stub ({todo!r})", "zh": "{path} 只是一个草稿（{todo!r}）"},
    "not_mentioned": {"en": "the notes I read ({paths}) do not mention {terms}", "zh": "我读过的笔记（{paths}）没有提到 {terms}"},
    "nothing_answers": {"en": "nothing I read answers this", "zh": "我读到的内容都不能回答这个问题"},
    "from_notes": {"en": "From your notes:", "zh": "根据你的笔记："},
    "notes_silent": {"en": "Your notes do not mention: {terms}.", "zh": "你的笔记没有提到：{terms}。"},
    "stub_unused": {"en": "{path} is only a stub, so I did not use it.", "zh": "{path} 只是一个草稿，所以我没有使用它。"},
    "sources": {"en": "\n\nSources: {paths}", "zh": "\n\n来源：{paths}"},
    "no_gap": {"en": "I found no learning gap to save: the notes I read cover the key terms of your question.",
               "zh": "我没有找到需要保存的学习缺口：我读过的笔记涵盖了你问题中的关键词。"},
    "propose_gap": {"en": "I propose to save this learning gap, once you approve it: {topic}.",
                    "zh": "我建议保存这个学习缺口，等你批准后再保存：{topic}。"},
    "gap_stub_evidence": {"en": "{path} is only a stub: {todo!r}", "zh": "{path} 只是一个草稿：{todo!r}"},
    "gap_stub_suggestion": {"en": "Write the note {title!r} in your own words, then ask me again to check it.",
                            "zh": "用你自己的话写好笔记 {title!r}，然后再让我检查一遍。"},
    "gap_unread_evidence": {"en": "the notes I read ({paths}) never mention {topic}",
                            "zh": "我读过的笔记（{paths}）都没有提到 {topic}"},
    "gap_unfound_evidence": {"en": "a search for {query!r} found nothing on {topic}",
                             "zh": "搜索 {query!r} 没有找到关于 {topic} 的内容"},
    "gap_suggestion": {"en": "Add a short note on {topic}: what it is, when it matters, and one example.",
                       "zh": "补一篇关于 {topic} 的简短笔记：它是什么、什么时候重要，再加一个例子。"},
    "saved": {"en": "Saved the learning gap as record {record_id}.", "zh": "已将学习缺口保存为记录 {record_id}。"},
    "replayed": {"en": " It was already saved: the server returned the first record.",
                 "zh": "它之前已经保存过：服务器返回了第一条记录。"},
    "save_forbidden": {"en": "I did not save the learning gap: {message}.", "zh": "我没有保存这个学习缺口：{message}。"},
    "save_no_record": {"en": "The save tool answered without a record id, so I can't confirm the learning gap was saved.",
                       "zh": "保存工具的回答里没有记录 id，所以我无法确认学习缺口已经保存。"},
    "save_failed": {"en": "Saving the learning gap failed ({code}): {message}\n{outcome}",
                    "zh": "保存学习缺口失败（{code}）：{message}\n{outcome}"},
}  # fmt: skip

# What to try after an error, by its code (answers._next_step).
_READ_STEPS = {
    "en": {
        "NOT_FOUND": "check the path (the file may have moved or been renamed) and ask again with the right one.",
        "FORBIDDEN": "ask for a file the tool is allowed to read; I won't try to get around the refusal.",
        "INVALID_INPUT": "correct what the message names and ask again.",
        "TIMEOUT": "try again in a moment; if it keeps failing, check the server.",
        "": "fix what the message names, then ask again.",
    },
    "zh": {
        "NOT_FOUND": "检查路径（文件可能已被移动或改名），再用正确的路径重新提问。",
        "FORBIDDEN": "请求一个该工具允许读取的文件；我不会设法绕过这次拒绝。",
        "INVALID_INPUT": "改正错误信息指出的问题，再重新提问。",
        "TIMEOUT": "稍后再试；如果一直失败，请检查服务器。",
        "": "修正错误信息指出的问题，然后再试。",
    },
}
# A failed write: never "try again" blindly, since an unconfirmed change may have been saved.
_WRITE_STEPS = {
    "en": {
        "FORBIDDEN": "this change is not allowed here; I won't try to get around the refusal.",
        "TIMEOUT": "check whether the change was saved before asking for it again.",
    },
    "zh": {
        "FORBIDDEN": "这里不允许这次修改；我不会设法绕过这次拒绝。",
        "TIMEOUT": "再次请求这次修改之前，先确认它是否已经保存。",
    },
}
_SAME_STEP = {"ENOENT": "NOT_FOUND", "EACCES": "FORBIDDEN", "UPSTREAM_ERROR": "TIMEOUT"}


def say(key: str, lang: str = "en", **fields: object) -> str:
    """The template `key` in `lang` ("en" or "zh"), filled with `fields`.

    Raises:
        KeyError: an unknown key, or a field the template needs and was not given.
    """
    return _TEXT[key]["zh" if lang == "zh" else "en"].format(**fields)


def next_step(code: str | None, lang: str = "en", writes: bool = False) -> str:
    """What to try after an error with `code`; `writes`: the call was meant to change data."""
    lang = "zh" if lang == "zh" else "en"
    code = _SAME_STEP.get(code or "", code or "")
    steps = {**_READ_STEPS[lang], **(_WRITE_STEPS[lang] if writes else {})}
    return say("next", lang, step=steps.get(code, steps[""]))


def listed(paths: list[str], lang: str = "en") -> str:
    """"a.txt and b.txt", "a, b and c"; in Chinese "a.txt 和 b.txt", "a、b 和 c"."""
    if len(paths) < 2:
        return "".join(paths)
    return say("list_sep", lang).join(paths[:-1]) + say("and", lang) + paths[-1]
