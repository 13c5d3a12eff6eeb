"""The notebook 07 checks name the specific thing a wrong answer gets wrong."""

import json

from course_lib.exercises import nb07


def run(check, answer, capsys):
    result = check(answer)
    out = capsys.readouterr().out
    assert result is False and out.startswith("✗")
    return out


# ---- pair_outputs -----------------------------------------------------------------------------


def by_call_id_without_checks(calls, outputs):
    texts = {item["call_id"]: item["output"] for item in outputs}
    return {call.call_id: texts[call.call_id] for call in calls}


def test_pairing_by_position_is_caught_when_outputs_arrive_in_finishing_order(capsys):
    out = run(nb07.check_pair_outputs, lambda calls, outputs: {
        call.call_id: item["output"] for call, item in zip(calls, outputs)}, capsys)  # fmt: skip
    assert "outputs in the order they finished" in out
    assert "got the output of" in out and "Pair by call_id, not by position" in out


def test_keys_in_arrival_order_are_caught(capsys):
    def arrival_order(calls, outputs):
        paired = by_call_id_without_checks(calls, outputs)
        return {item["call_id"]: paired[item["call_id"]] for item in outputs}

    assert "right pairs, wrong order" in run(nb07.check_pair_outputs, arrival_order, capsys)


def test_a_reused_call_id_must_be_refused(capsys):
    out = run(nb07.check_pair_outputs, by_call_id_without_checks, capsys)
    assert "a call_id reused with different arguments" in out and "Raise ValueError" in out


def test_an_exact_repeat_must_not_be_refused(capsys):
    def refuse_every_repeat(calls, outputs):
        ids = [call.call_id for call in calls]
        if len(ids) != len(set(ids)):
            raise ValueError("repeated call_id")
        return by_call_id_without_checks(calls, outputs)

    out = run(nb07.check_pair_outputs, refuse_every_repeat, capsys)
    assert "an exact repeat is the same call" in out


def test_an_orphan_output_must_be_refused(capsys):
    def ignore_orphans(calls, outputs):
        known = {call.call_id for call in calls}
        return nb07.SOLUTIONS["check_pair_outputs"]()(calls, [o for o in outputs if o["call_id"] in known])

    out = run(nb07.check_pair_outputs, ignore_orphans, capsys)
    assert "call_never_made" in out and "No tool call found" in out


def test_a_value_instead_of_the_function_is_named(capsys):
    assert "Pass the function itself" in run(nb07.check_pair_outputs, {"call_1": "text"}, capsys)


# ---- plan -------------------------------------------------------------------------------------


def test_one_wave_for_everything_puts_a_write_with_reads(capsys):
    out = run(nb07.check_plan, lambda calls, tools: [[c.call_id for c in calls]] if calls else [], capsys)
    assert "case 'read, save, read'" in out and "call_w1 (save_note) has a side effect: it runs alone" in out


def test_one_wave_per_call_wastes_rounds(capsys):
    out = run(nb07.check_plan, lambda calls, tools: [[c.call_id] for c in calls], capsys)
    assert "case 'three reads from the model'" in out and "merge them" in out


def test_reads_first_then_writes_breaks_the_model_order(capsys):
    def reads_first(calls, tools):
        reads = [c.call_id for c in calls if c.name in tools and not tools[c.name].side_effect]
        return ([reads] if reads else []) + [[c.call_id] for c in calls if c.call_id not in reads]

    out = run(nb07.check_plan, reads_first, capsys)
    assert "runs call_r2 before call_w1" in out and "keep the model's order" in out


def test_an_unknown_tool_treated_as_a_read_is_caught(capsys):
    def unknown_is_read(calls, tools):
        waves, reads = [], []
        for call in calls:
            if call.name in tools and tools[call.name].side_effect:
                waves += [reads, [call.call_id]] if reads else [[call.call_id]]
                reads = []
            else:
                reads.append(call.call_id)
        return waves + ([reads] if reads else [])

    out = run(nb07.check_plan, unknown_is_read, capsys)
    assert "delete_file, which is not in the registry" in out


def test_a_dropped_write_is_named(capsys):
    out = run(nb07.check_plan, lambda calls, tools: [[c.call_id for c in calls if not tools[c.name].side_effect]], capsys)
    assert "call_w1 (save_note) is missing from your plan" in out


def test_a_crash_on_an_unknown_tool_is_explained(capsys):
    def crashes(calls, tools):
        return nb07.SOLUTIONS["check_plan"]()([c for c in calls if tools[c.name]], tools)

    out = run(nb07.check_plan, crashes, capsys)
    assert "raised KeyError" in out and "tools.get(call.name)" in out


# ---- wrong answers learners really write -----------------------------------------------------


def test_parsed_outputs_are_named(capsys):
    def parsed(calls, outputs):
        paired = nb07.SOLUTIONS["check_pair_outputs"]()(calls, outputs)
        return {call_id: json.loads(text) for call_id, text in paired.items()}

    out = run(nb07.check_pair_outputs, parsed, capsys)
    assert "is of type dict, not the output text" in out and "do not json.loads it" in out


def test_a_key_error_for_a_missing_output_is_told_to_be_a_value_error(capsys):
    def indexes(calls, outputs):
        first = {}
        for call in calls:
            seen = first.setdefault(call.call_id, call)
            if (seen.name, seen.arguments) != (call.name, call.arguments):
                raise ValueError("reused call_id")
        texts = {item["call_id"]: item["output"] for item in outputs}
        if set(texts) - set(first):
            raise ValueError("unknown call_id")
        return {call_id: texts[call_id] for call_id in first}  # KeyError for the unanswered call

    out = run(nb07.check_pair_outputs, indexes, capsys)
    assert "case 'the read of notes.txt left without an output'" in out and "raised KeyError" in out
    assert "where a ValueError is wanted" in out


def test_consecutive_writes_sharing_a_wave_are_caught(capsys):
    def writes_together(calls, tools):
        waves, kind = [], None
        for call in calls:
            this = "read" if call.name in tools and not tools[call.name].side_effect else "write"
            if this != kind:
                waves.append([])
                kind = this
            waves[-1].append(call.call_id)
        return waves

    out = run(nb07.check_plan, writes_together, capsys)
    assert "case 'two saves to the same note'" in out and "call_w1 together with call_w2" in out


def test_forgetting_the_last_wave_is_named(capsys):
    def no_flush(calls, tools):
        waves, reads = [], []
        for call in calls:
            tool = tools.get(call.name)
            if tool is None or tool.side_effect:
                waves += [reads, [call.call_id]] if reads else [[call.call_id]]
                reads = []
            else:
                reads.append(call.call_id)
        return waves  # the reads after the last write are never added

    out = run(nb07.check_plan, no_flush, capsys)
    assert "the reads after the last write" in out and "add the wave you were still collecting" in out


def test_empty_waves_and_call_objects_are_named(capsys):
    def empty_before_write(calls, tools):
        waves, reads = [], []
        for call in calls:
            tool = tools.get(call.name)
            if tool is None or tool.side_effect:
                waves += [reads, [call.call_id]]
                reads = []
            else:
                reads.append(call.call_id)
        return waves + ([reads] if reads else [])

    assert "is empty. Leave empty waves out" in run(nb07.check_plan, empty_before_write, capsys)
    out = run(nb07.check_plan, lambda calls, tools: [[c] for c in calls], capsys)
    assert "holds a Call object; put its call_id" in out


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_the_not_answered_messages_follow_the_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert run(nb07.check_pair_outputs, ..., capsys) == (
        "✗ Not answered yet: define pair_outputs(calls, outputs), then set answer = pair_outputs (the function itself, "
        "without parentheses) and run the cell again.\n")
    assert run(nb07.check_plan, ..., capsys) == (
        "✗ Not answered yet: define plan(calls, tools), then set answer = plan (the function itself, without "
        "parentheses) and run the cell again.\n")
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert run(nb07.check_pair_outputs, ..., capsys) == (
        "✗ 还没有作答：定义 pair_outputs(calls, outputs)，然后写 answer = pair_outputs（函数本身，不带括号），再运行这个单元格。\n")
    assert run(nb07.check_plan, ..., capsys) == (
        "✗ 还没有作答：定义 plan(calls, tools)，然后写 answer = plan（函数本身，不带括号），再运行这个单元格。\n")


def test_pair_outputs_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    out = run(nb07.check_pair_outputs, lambda calls, outputs: {
        call.call_id: item["output"] for call, item in zip(calls, outputs)}, capsys)  # fmt: skip
    assert "（读取 /workspace/notes.txt，head 2）拿到了 call_" in out and "请按 call_id 配对，不要按位置。" in out
    out = run(nb07.check_pair_outputs, by_call_id_without_checks, capsys)
    assert out.startswith("✗ 例子“一个 call_id 被重用，参数不同”：call_") and "请抛出 ValueError" in out
    out = run(nb07.check_pair_outputs, lambda calls, outputs: {
        k: json.loads(v) for k, v in nb07.SOLUTIONS["check_pair_outputs"]()(calls, outputs).items()}, capsys)  # fmt: skip
    assert "的值的类型是 dict，不是输出文本" in out and "不要对它 json.loads" in out
    assert "请传入函数本身（pair_outputs，不带括号）" in run(nb07.check_pair_outputs, {"call_1": "text"}, capsys)
    assert nb07.check_pair_outputs(nb07.SOLUTIONS["check_pair_outputs"]()) is True
    assert capsys.readouterr().out.startswith("✓ 全部 13 个批次都对了")


def test_plan_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    out = run(nb07.check_plan, lambda calls, tools: [[c.call_id for c in calls]] if calls else [], capsys)
    assert out == ("✗ 例子“读取、保存、读取”：第 1 波把 call_w1 和 call_r1, call_r2 一起运行，"
                   "但 call_w1（save_note）有副作用：它要单独运行。\n")
    out = run(nb07.check_plan, lambda calls, tools: [[c.call_id] for c in calls], capsys)
    assert "第 1 波和第 2 波只有读取，中间没有写入：把它们合并。" in out
    out = run(nb07.check_plan, lambda calls, tools: [[c] for c in calls], capsys)
    assert "第 1 波里放的是 Call 对象" in out
    out = run(nb07.check_plan, lambda calls, tools: [[c.call_id for c in calls if not tools[c.name].side_effect]], capsys)
    assert "你的计划里缺少 call_w1（save_note）" in out
    assert nb07.check_plan(nb07.SOLUTIONS["check_plan"]()) is True
    assert capsys.readouterr().out.startswith("✓ 全部 1370 轮都规划对了")
