"""The explorer: real runs through the pipeline, and which panels each change of condition moves."""

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import openai
import pytest

from course_lib.explorer import (
    GROUPS, NOT_EXECUTED, OUTSIDE_PATH, PANELS, Explorer, ExplorerWidget, Panel, compose_request, diff_segments,
)  # fmt: skip
from course_lib.backend import make_client
from course_lib.items import kinds
from course_lib.offline_model import running_server, standin_transport
from course_lib.wire import HttpCapture

RULES, VALUES, RESULTS = (set(GROUPS[g]) for g in ("rule", "value", "result"))


@pytest.fixture
def explorer(monkeypatch: pytest.MonkeyPatch) -> Iterator[Explorer]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the offline model: deterministic
    with Explorer() as explorer:
        yield explorer


def test_first_run_has_nothing_to_compare_with(explorer):
    snap = explorer.run(head=20)
    assert {panel.status for panel in snap.panels.values()} == {"baseline"}
    assert snap.compared_with is None and explorer.baseline is snap
    assert snap.request == "Show the first 20 lines of /workspace/notes.txt"
    assert (snap.reads, snap.reads_delta, snap.model_requests) == (1, 1, 2)
    assert json.loads(snap.panels["arguments"].text) == {"path": "/workspace/notes.txt", "head": 20}
    assert snap.ids["call_id"].text.startswith("call_")


def test_head_20_to_5_moves_values_and_results_never_rules(explorer):
    explorer.run(head=20)
    snap = explorer.run(head=5)
    assert snap.unchanged == RULES
    assert snap.changed == VALUES | RESULTS
    assert snap.reads_delta == 1
    assert snap.panels["arguments"].text == '{"path":"/workspace/notes.txt","head":5}'
    assert snap.panels["arguments"].change() == "'20' → '5'"
    assert json.loads(snap.panels["mcp_arguments"].text) == {"path": "/workspace/notes.txt", "head": 5}
    assert json.loads(snap.panels["mcp_result"].text)["structuredContent"]["lines"] == 5
    assert snap.panels["answer"].text.startswith("Here are the first 5 lines of /workspace/notes.txt")
    assert snap.ids["call_id"].status == snap.ids["mcp_id"].status == "changed"


def test_only_tail_changes(explorer):
    explorer.run(head=None, tail=3)
    snap = explorer.run(head=None, tail=10)
    assert snap.changed == VALUES | RESULTS and snap.unchanged == RULES
    assert json.loads(snap.panels["mcp_arguments"].text) == {"path": "/workspace/notes.txt", "tail": 10}
    assert json.loads(snap.panels["mcp_result"].text)["structuredContent"]["lines"] == 10


def test_parse_only_executes_nothing(explorer):
    explorer.run(head=5)
    calls_before = len(explorer.host().connections["fs"].exchanges("tools/call"))
    snap = explorer.run(head=5, parse_only=True)
    assert snap.unchanged == RULES | {"arguments", "parsed"}
    assert snap.changed == {"mcp_arguments"} | RESULTS
    assert "✓ valid against the rule" in snap.panels["parsed"].text
    assert snap.panels["mcp_arguments"].text.startswith("not sent")
    assert snap.panels["mcp_result"].text == snap.panels["function_call_output"].text == NOT_EXECUTED
    assert snap.panels["answer"].text.startswith(NOT_EXECUTED)
    assert (snap.reads_delta, snap.model_requests, snap.ids["mcp_id"].text) == (0, 1, "not sent")
    assert len(explorer.host().connections["fs"].exchanges("tools/call")) == calls_before


def test_result_not_sent_back_is_not_in_the_answer(explorer):
    explorer.run(head=5)
    snap = explorer.run(head=5, send_back=False)
    assert snap.model_requests == 1  # no second request was made
    assert snap.reads_delta == 1  # but the read happened
    feedback = json.loads(snap.panels["function_call_output"].text)
    assert feedback["type"] == "function_call_output" and feedback["call_id"] == snap.ids["call_id"].text
    assert snap.panels["answer"].text.startswith("not answered: the result was never sent back")
    last_request = explorer.wire.exchanges[-1].request
    assert [item.get("type", "message") for item in last_request["input"]] == ["message"]


def test_outside_path_passes_the_schema_and_the_server_refuses(explorer):
    explorer.run(head=5)
    snap = explorer.run(head=5, outside=True)
    assert snap.request == f"Show the first 5 lines of {OUTSIDE_PATH}"
    assert "✓ valid against the rule" in snap.panels["parsed"].text  # a valid shape...
    result = json.loads(snap.panels["mcp_result"].text)
    assert result["isError"] is True  # ...is not a permission
    assert result["content"][0]["text"] == "FORBIDDEN: path is outside /workspace"
    assert json.loads(json.loads(snap.panels["function_call_output"].text)["output"])["ok"] is False
    assert "FORBIDDEN" in snap.panels["answer"].text
    assert snap.reads_delta == 0 and snap.unchanged == RULES


def test_two_servers_same_tool_name_route_by_alias(explorer):
    first = explorer.run(head=5, two_servers=True, server="fs")
    assert sorted(explorer.host(two_servers=True).routes) == ["arch__read_text_file", "fs__read_text_file"]
    assert first.route == "model called fs__read_text_file → server fs, tool read_text_file"
    snap = explorer.run(head=5, two_servers=True, server="arch")
    assert snap.route == "model called arch__read_text_file → server arch, tool read_text_file"
    assert snap.unchanged == RULES | VALUES  # the alias changes no argument value
    assert snap.changed == RESULTS
    assert "Archived note 1" in snap.panels["mcp_result"].text
    assert snap.ids["mcp_id"].text.endswith("on arch")
    assert explorer.archive is not None and explorer.archive.reads == 1


# ---- the baseline: every run is compared with one pinned run, never with whatever ran last ------------


def test_every_run_is_compared_with_the_baseline_not_with_the_previous_run(explorer):
    first = explorer.run(head=20)
    explorer.run(head=5)
    snap = explorer.run(head=20)  # the same as the baseline: nothing left over from the head=5 run
    assert (snap.run, snap.compared_with) == (3, 1)
    assert snap.unchanged >= RULES | VALUES | {"mcp_result", "answer"}, snap.changed
    # the feedback may differ only by its call_id (a new response may mint a new one), never by the result
    feedback, base = (json.loads(s.panels["function_call_output"].text) for s in (snap, first))
    assert feedback["output"] == base["output"] and feedback["call_id"] == snap.ids["call_id"].text
    assert snap.panels["arguments"].before == first.panels["arguments"].text
    assert snap.header().splitlines()[1].startswith("compared with run 1 · model called fs__read_text_file")


def test_pin_makes_another_run_the_baseline(explorer):
    with pytest.raises(ValueError, match="nothing to pin yet"):
        explorer.pin()
    explorer.run(head=20)
    head5 = explorer.run(head=5)
    pinned = explorer.pin(head5)
    assert pinned.run == 2 and {p.status for p in pinned.panels.values()} == {"baseline"}
    snap = explorer.run(head=5, parse_only=True)
    assert snap.compared_with == 2
    assert snap.unchanged == RULES | {"arguments", "parsed"} and snap.changed == {"mcp_arguments"} | RESULTS
    assert explorer.pin().run == 3 and explorer.run(head=5, parse_only=True).unchanged == set(PANELS)


def test_reset_forgets_the_baseline_and_the_next_run_is_a_new_one(explorer):
    explorer.run(head=20)
    explorer.run(head=5)
    explorer.reset()
    assert explorer.baseline is None and explorer.last is None
    snap = explorer.run(head=3)
    assert (snap.run, snap.compared_with) == (3, None) and {p.status for p in snap.panels.values()} == {"baseline"}
    assert explorer.run(head=4).compared_with == 3
    assert snap.header().splitlines()[1].startswith("the baseline · ")


def test_refused_inputs(explorer):
    with pytest.raises(ValueError, match="two_servers=True"):
        explorer.run(server="arch")
    assert explorer.last is None


def test_compose_request():
    assert compose_request("/workspace/todo.md", tail=2) == "Show the last 2 lines of /workspace/todo.md"
    assert compose_request(head=None) == "Show all of /workspace/notes.txt"
    assert compose_request(head=1, server="arch") == "Show the first 1 line of /workspace/notes.txt using the arch server"
    # every combination is a request a learner may send: both counts, or no file named at all
    assert compose_request(head=20, tail=3) == "Show the first 20 lines and the last 3 lines of /workspace/notes.txt"
    assert compose_request("", head=20) == compose_request("  ", head=20) == "Show the first 20 lines"
    assert compose_request("", head=None) == "Show the whole file"


# ---- honest for any request: what was sent, what happened, nothing left over from an earlier run ------


@pytest.mark.parametrize("request_text", ["Hello there", None])  # None: the empty path's composed request
def test_a_text_answer_leaves_the_rules_as_they_were(explorer, request_text):
    base = explorer.run(head=20)
    snap = explorer.run(request_text, path="")
    assert snap.request == (request_text or "Show the first 20 lines")
    assert snap.calls == [] and snap.reads_delta == 0 and snap.model_requests == 1
    # regression: every panel, the rules too, read "no call", so the rules were reported as changed
    assert snap.unchanged >= RULES and snap.changed >= VALUES | {"mcp_result", "function_call_output"}
    assert snap.panels["parameters"].text == base.panels["parameters"].text
    sent = json.loads(snap.panels["parameters"].text)
    assert sent == snap.exchanges[0].request["tools"][0]["parameters"]  # what the request really declared
    assert snap.panels["arguments"].text == "no call: the model answered in text"
    assert snap.panels["mcp_arguments"].text == "not sent: no call"
    assert snap.panels["mcp_result"].text == snap.panels["function_call_output"].text == "not executed: no call"
    assert snap.panels["answer"].text == snap.exchanges[0].response["output"][-1]["content"][0]["text"]
    assert snap.route == "no tool call: the model answered in text"
    assert {n: p.text for n, p in snap.ids.items()} == {"call_id": "none", "mcp_id": "none"}


def test_head_and_tail_together_are_sent_and_every_call_is_shown(explorer):
    base = explorer.run(head=20)
    snap = explorer.run(head=20, tail=3)  # the tool takes one of them per call: this model splits the read in two
    assert snap.request == "Show the first 20 lines and the last 3 lines of /workspace/notes.txt"
    assert [json.loads(c.arguments) for c in snap.calls] == [
        {"path": "/workspace/notes.txt", "head": 20}, {"path": "/workspace/notes.txt", "tail": 3}]
    assert snap.unchanged == RULES and snap.changed == VALUES | RESULTS
    assert snap.panels["input_schema"].text == base.panels["input_schema"].text
    for name in VALUES | {"mcp_result", "function_call_output"}:  # each panel lists both calls, in order
        text = snap.panels[name].text
        assert text.index("call 1 of 2: fs__read_text_file\n") < text.index("call 2 of 2: fs__read_text_file\n"), name
    assert [c.result["structuredContent"]["lines"] for c in snap.calls] == [20, 3]
    assert snap.reads_delta == 2 and snap.route.startswith("2 calls: model called fs__read_text_file")
    assert snap.ids["call_id"].text == ", ".join(c.call_id for c in snap.calls)
    assert snap.ids["mcp_id"].text == ", ".join(f"{c.mcp_id} on fs" for c in snap.calls)


def test_the_outside_path_call_is_recorded_with_what_became_of_it(explorer):
    snap = explorer.run(head=5, outside=True)
    (made,) = snap.calls
    assert made.result == json.loads(snap.panels["mcp_result"].text) and made.result["isError"] is True
    assert made.mcp_arguments == {"path": OUTSIDE_PATH, "head": 5} and made.error_code == "FORBIDDEN"
    assert made.feedback == json.loads(snap.panels["function_call_output"].text)
    assert json.loads(made.output)["error"]["code"] == "FORBIDDEN"


def test_a_snapshot_keeps_its_own_exchanges(explorer):
    first = explorer.run(head=20)
    later = explorer.run(head=5, send_back=False)
    assert [e.request["input"][0]["content"] for e in first.exchanges] == [first.request] * 2
    assert len(later.exchanges) == later.model_requests == 1
    assert first.exchanges + later.exchanges == explorer.wire.exchanges


def test_diff_segments_shows_the_changed_token_only():
    assert diff_segments('{"head":20}', '{"head":5}') == [("=", '{"head":'), ("-", "20"), ("+", "5"), ("=", "}")]
    assert diff_segments("a\nb\n", "a\n") == [("=", "a\n"), ("-", "b\n")]
    panel = Panel("arguments", '{"head":5}', before='{"head":20}')
    assert panel.status == "changed" and "<del" in panel.diff_html() and ">5</ins>" in panel.diff_html()
    assert Panel("arguments", "x", before="x").diff_html() == "x"


def _page_text(markup: str) -> str:
    """What a browser shows for an HTML fragment: the text, tags gone, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_a_change_reads_old_arrow_new_not_the_two_glued_together():
    panel = Panel("arguments", '{"head":5}', before='{"head":20}')
    assert _page_text(panel.diff_html()) == '{"head":20 → 5}'  # regression: it read {"head":205}
    answer = Panel("answer", "the first 5 lines", before="the first 20 lines")
    assert _page_text(answer.diff_html()) == "the first 20 → 5 lines"  # the shared space stays outside the change
    removed = Panel("answer", "a\n", before="a\n" + "x" * 99 + "\n")  # a long removal is cut, with its size
    assert _page_text(removed.diff_html()) == "a\n" + "x" * 40 + "… (−100 chars)"


def test_each_distinct_change_is_summarised_once(explorer):
    explorer.run(head=20)
    snap = explorer.run(head=5)
    # The 15 dropped lines appear twice in the result (content[].text and structuredContent.text).
    change = snap.panels["mcp_result"].change()
    assert re.fullmatch(r"'20' → '5', removed \d+ chars \(in 2 places\)", change), change
    assert change.count("removed") == 1
    assert snap.panels["answer"].change().startswith("'20' → '5', removed ")  # the replacement first


def test_rule_panels_are_shown_whole(explorer):
    ui = ExplorerWidget(explorer)
    ui.run()
    for name in GROUPS["rule"]:
        assert "max-height:none" in ui.panels[name].value, name  # regression: cut at 150px, before `head`
        assert '"head"' in _page_text(ui.panels[name].value)
    assert "max-height:260px" in ui.panels["mcp_result"].value  # a long result scrolls


def test_snapshot_displays_as_a_table(explorer):
    explorer.run(head=20)
    snap = explorer.run(head=5)
    text = snap.table()
    assert "value   arguments             changed    '20' → '5'" in text
    assert "rule    input_schema          unchanged" in text
    assert "<del" in snap._repr_html_() and "<table>" in snap._repr_html_()


def test_widget_run_button_refreshes_every_panel(explorer):
    ui = ExplorerWidget(explorer)
    ui.run()
    ui.inputs["head"].value = 5
    ui.button.click()
    assert ui.snapshot.changed == VALUES | RESULTS
    for name in PANELS:
        status = "unchanged" if name in RULES else "changed"
        assert 'class="explorer-status"' in ui.panels[name].value
        assert f">{status}</span>" in ui.panels[name].value, name
        assert f"explorer-panel-{name}" in ui.panels[name]._dom_classes
    assert "run 2" in ui.summary.value and "(+1)" in ui.summary.value and "compared with run 1" in ui.summary.value
    assert ui._repr_mimebundle_()["text/plain"].startswith("ExplorerWidget")


def test_widget_pin_button_pins_the_run_on_show(explorer):
    ui = ExplorerWidget(explorer)
    assert ui.pin_button.disabled and "no baseline yet" in ui.baseline_line.value  # nothing to pin yet
    ui.button.click()
    assert ui.pin_button.disabled and "baseline: run 1" in ui.baseline_line.value  # the run on show is the baseline
    ui.set(head=5)
    ui.button.click()
    assert not ui.pin_button.disabled and ui.snapshot.compared_with == 1
    ui.pin_button.click()
    assert ui.pin_button.disabled and "baseline: run 2" in ui.baseline_line.value
    assert ui.snapshot.compared_with is None and ">baseline</span>" in ui.panels["answer"].value  # shown as the baseline
    ui.set(head=5, tail=0, parse_only=True)
    ui.button.click()
    assert ui.snapshot.compared_with == 2 and ui.snapshot.changed == {"mcp_arguments"} | RESULTS  # only parse-only's effect
    for name in ("explorer-run", "explorer-pin", "explorer-reset"):
        assert name in {c for b in (ui.button, ui.pin_button, ui.reset_button) for c in b._dom_classes}


def test_widget_reset_button_restores_the_defaults_and_makes_a_fresh_baseline(explorer):
    ui = ExplorerWidget(explorer)
    ui.set(head=5, outside=True)
    ui.button.click()
    ui.inputs["tail"].value = 3  # a refused combination left in the inputs: Reset must not care
    ui.reset_button.click()
    assert ui.values()["head"] == 20 and ui.values()["tail"] is None and not ui.values()["outside"]
    assert (ui.snapshot.run, ui.snapshot.compared_with) == (2, None)
    assert {p.status for p in ui.snapshot.panels.values()} == {"baseline"} and "baseline: run 2" in ui.baseline_line.value
    assert ui.snapshot.request == "Show the first 20 lines of /workspace/notes.txt"
    ui.set(tail=2, head=0)
    ui.button.click()
    assert ui.snapshot.compared_with == 2 and ui.snapshot.unchanged == RULES


def test_widget_toggles_map_to_run_options(explorer):
    ui = ExplorerWidget(explorer)
    for name in ("parse_only", "dont_send_back", "outside", "two_servers"):
        ui.inputs[name].value = True
    ui.inputs["server"].value = "arch"
    assert ui.values() == {"request": None, "path": "/workspace/notes.txt", "head": 20, "tail": None, "server": "arch",
                           "two_servers": True, "outside": True, "parse_only": True, "send_back": False}
    assert ui.reset().request == "Show the first 20 lines of /workspace/notes.txt"


def test_widget_head_and_tail_together_replace_every_panel(explorer):
    ui = ExplorerWidget(explorer)
    ui.button.click()
    before = {name: panel.value for name, panel in ui.panels.items()}
    ui.inputs["tail"].value = 4  # head is 20 too: sent as it is, not refused before the model sees it
    ui.button.click()  # regression: the run was refused and every panel kept showing run 1
    assert ui.snapshot.run == 2 and "run 2" in ui.summary.value
    for name in VALUES | RESULTS:
        assert ui.panels[name].value != before[name] and ">changed</span>" in ui.panels[name].value, name
    assert "call 2 of 2: fs__read_text_file" in _page_text(ui.panels["mcp_arguments"].value)
    for name in RULES:
        assert ">unchanged</span>" in ui.panels[name].value, name


def test_widget_a_text_answer_shows_the_rules_sent_and_says_no_call(explorer):
    ui = ExplorerWidget(explorer)
    ui.button.click()
    ui.set(request="Hello")
    ui.button.click()
    for name in RULES:
        assert ">unchanged</span>" in ui.panels[name].value and '"head"' in _page_text(ui.panels[name].value), name
    assert "no call: the model answered in text" in _page_text(ui.panels["arguments"].value)
    assert "not executed: no call" in _page_text(ui.panels["mcp_result"].value)
    assert "no tool call" in ui.summary.value


def _failing_course(status: int = 500) -> SimpleNamespace:
    """A course whose model endpoint answers every request with an HTTP error."""
    wire = HttpCapture(httpx.MockTransport(lambda request: httpx.Response(status, json={"error": {
        "message": "the server had an error", "type": "server_error", "code": None, "param": None}})))
    client = openai.OpenAI(api_key="test", base_url="http://model.invalid/v1", max_retries=0,
                           http_client=httpx.Client(transport=wire))
    return SimpleNamespace(wire=wire, client=client)


def test_widget_a_failed_run_leaves_no_earlier_panel_on_show(explorer):
    ui = ExplorerWidget(explorer)
    ui.button.click()
    assert "Here are the first 20 lines" in ui.panels["answer"].value
    explorer.client = _failing_course().client  # the endpoint fails from now on
    ui.set(head=5)
    ui.button.click()
    assert "✗ InternalServerError" in ui.summary.value and ui.snapshot is None
    for name, panel in ui.panels.items():
        assert ">failed</span>" in panel.value and "this run stopped with an error" in panel.value, name
        assert "<pre" in panel.value and _page_text(panel.value.split("<pre", 1)[1].split(">", 1)[1]) == "", name
    assert ui.pin_button.disabled  # no run on show: nothing to pin
    assert explorer.baseline.run == 1 and explorer.last.run == 1  # the failed run is not a run


def test_widget_says_running_while_the_model_answers(explorer):
    ui = ExplorerWidget(explorer)
    ui.button.click()
    seen = []
    inner = explorer.wire.inner

    class Watching(httpx.BaseTransport):  # what the page shows at the moment the request leaves
        def handle_request(self, request):
            seen.append((ui.summary.value, {n: p.value for n, p in ui.panels.items()}))
            return inner.handle_request(request)

    explorer.wire.inner = Watching()
    ui.set(head=5)
    ui.button.click()
    summary, panels = seen[0]
    assert summary == "running…"
    for name, value in panels.items():
        assert ">running</span>" in value and "Here are the first 20 lines" not in value, name
    assert ">changed</span>" in ui.panels["answer"].value  # and the run's own panels once it is done


def test_badges_never_wrap(explorer):
    ui = ExplorerWidget(explorer)
    ui.button.click()
    for name, panel in ui.panels.items():
        badge = re.search(r'<span class="explorer-status" style="([^"]*)"', panel.value).group(1)
        assert "white-space:nowrap" in badge and "flex:none" in badge, name
    assert ui.summary.value.count("white-space:nowrap") == 2  # the two ids' badges


def test_set_states_every_input_whatever_was_clicked_before(explorer):
    ui = ExplorerWidget(explorer)
    ui.inputs["request"].value = "Hello there"  # what a learner may have typed and ticked
    for name in ("parse_only", "dont_send_back", "outside", "two_servers"):
        ui.inputs[name].value = True
    ui.inputs["tail"].value = 4
    ui.set(head=5, parse_only=True)
    assert ui.values() == {"request": None, "path": "/workspace/notes.txt", "head": 5, "tail": None, "server": "fs",
                           "two_servers": False, "outside": False, "parse_only": True, "send_back": True}
    assert ui.inputs["server"].disabled  # two servers off again, so the server cannot be picked
    with pytest.raises(ValueError, match="no input named heads"):
        ui.set(heads=5)


# ---- the zh-CN edition: the same runs, what the learner reads in Chinese ------------------------


@pytest.fixture
def zh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSE_LANG", "zh-CN")


def test_compose_request_in_chinese(zh):
    assert compose_request(head=5) == "显示 /workspace/notes.txt 的前 5 行"
    assert compose_request("/workspace/todo.md", tail=2) == "显示 /workspace/todo.md 的最后 2 行"
    assert compose_request(head=None) == "显示 /workspace/notes.txt 的全部内容"
    assert compose_request(head=1, server="arch") == "显示 /workspace/notes.txt 的前 1 行，使用 arch 服务器"
    assert compose_request(head=3, tail=2) == "显示 /workspace/notes.txt 的前 3 行和最后 2 行"
    assert compose_request("", head=20) == "显示前 20 行" and compose_request("", head=None) == "显示全部内容"


def test_chinese_runs_move_the_same_objects_as_the_english(zh, explorer):
    explorer.run(head=20)
    snap = explorer.run(head=5)
    assert snap.request == "显示 /workspace/notes.txt 的前 5 行"
    assert snap.unchanged == RULES and snap.changed == VALUES | RESULTS  # statuses stay the keys code compares
    assert snap.panels["arguments"].text == '{"path":"/workspace/notes.txt","head":5}'  # the same call
    assert snap.panels["answer"].text.startswith("以下是 /workspace/notes.txt 的前 5 行")
    assert re.fullmatch(r"'20' → '5'，删除了 \d+ 个字符（共 2 处）", snap.panels["mcp_result"].change())
    assert snap.route == "模型调用 fs__read_text_file → 服务器 fs，工具 read_text_file"
    assert snap.ids["mcp_id"].text == "fs 上的 4"
    table = snap.table()
    assert table.startswith("第 2 次运行：'显示 /workspace/notes.txt 的前 5 行'\n")
    assert "真实文件读取 2（+1） · 模型请求 2" in table
    assert "组      对象                  状态       变化 / 当前值" in table  # CJK counts two columns
    assert "值      arguments             已变化     '20' → '5'" in table
    assert "规则    input_schema          未变化" in table
    assert "<th>组</th><th>对象</th><th>状态</th>" in snap._repr_html_()


def test_chinese_panels_say_what_did_not_happen(zh, explorer):
    explorer.run(head=5)
    snap = explorer.run(head=5, parse_only=True)
    assert snap.panels["parsed"].text.endswith("\n✓ 符合规则（inputSchema）")
    assert snap.panels["mcp_arguments"].text == "未发送（仅解析：没有 tools/call）"
    assert snap.panels["mcp_result"].text == snap.panels["function_call_output"].text == "未执行"
    assert snap.panels["answer"].text.startswith("未执行：")
    assert snap.ids["mcp_id"].text == "未发送" and snap.reads_delta == 0
    snap = explorer.run(head=5, send_back=False)
    assert snap.panels["answer"].text == "没有回答：结果从未发回，所以模型没有被再次请求"
    snap = explorer.run("你好")
    assert snap.panels["arguments"].text == "没有调用：模型直接用文本回答" and snap.unchanged >= RULES
    assert snap.panels["mcp_result"].text == "未执行：没有调用" and snap.route == "没有工具调用：模型直接用文本回答"
    both = explorer.run(head=20, tail=3)
    assert both.request == "显示 /workspace/notes.txt 的前 20 行和最后 3 行" and len(both.calls) == 2
    assert "第 2 个调用（共 2 个）：fs__read_text_file\n" in both.panels["arguments"].text
    assert both.route.startswith("2 个调用：模型调用 fs__read_text_file")


def test_chinese_widget_labels_statuses_and_fallback(zh, explorer):
    ui = ExplorerWidget(explorer)
    assert ui.summary.value == "尚未运行" and ">尚未运行</span>" in ui.panels["answer"].value
    assert ui.button.description == "运行"
    assert ui.inputs["parse_only"].description == "仅解析，不执行"
    assert ui.inputs["dont_send_back"].description == "不把结果发回"
    assert ui.inputs["outside"].description == "工作区之外的路径"
    assert ui.inputs["two_servers"].description == "两个服务器，同一个工具名"
    assert (ui.pin_button.description, ui.reset_button.description) == ("设为基线", "重置")
    assert ui.baseline_line.value == "还没有基线：下一次运行就是基线"
    assert "规则 · 声明" in ui.children[-1].children[0].children[0].value
    ui.run()
    ui.set(head=5)
    ui.button.click()
    assert ">最终回答</b>" in ui.panels["answer"].value and ">已变化</span>" in ui.panels["answer"].value
    assert ">未变化</span>" in ui.panels["parameters"].value
    assert ui.summary.value.startswith("<b>第 2 次运行</b>：显示 /workspace/notes.txt 的前 5 行<br>与第 1 次运行比较 · ")
    assert ui.baseline_line.value == "基线：第 1 次运行，显示 /workspace/notes.txt 的前 20 行"
    ui.pin()
    assert ">基线</span>" in ui.panels["answer"].value and ui.summary.value.split("<br>")[1].startswith("基线 · ")
    assert "真实文件读取 <b>2</b>（+1） · 模型请求 2" in ui.summary.value
    assert ui._repr_mimebundle_()["text/plain"].startswith("ExplorerWidget（在运行中的 Jupyter 内核里可以交互")
    ui.explorer.client = _failing_course().client
    ui.button.click()
    assert ">出错</span>" in ui.panels["answer"].value and "没有结果：这次运行因出错而中止" in ui.panels["answer"].value


def test_the_english_summary_is_unchanged(explorer):
    ui = ExplorerWidget(explorer)
    ui.run()
    assert re.fullmatch(r"<b>run 1</b>: Show the first 20 lines of /workspace/notes.txt<br>the baseline · model called "
                        r"fs__read_text_file → server fs, tool read_text_file · call_id <code>call_\w+</code> <span "
                        r"style='background:#dbeafe;padding:0 5px;white-space:nowrap'>baseline</span> · MCP id <code>3 on fs</code> "
                        r"<span style='background:#dbeafe;padding:0 5px;white-space:nowrap'>baseline</span> · real file reads <b>1</b> "
                        r"\(\+1\) · model requests 2", ui.summary.value), ui.summary.value


# ---- notebook 08 itself: its cells do not depend on what the learner clicked --------------------

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _learner_clicks(ui: ExplorerWidget) -> None:
    """What a learner may do in the displayed widget between two cells: odd inputs, Run, Pin,
    Reset, more odd inputs and another Pin, a request answered in text, head and tail together, and
    inputs left odd (no path, both counts, nothing sent back)."""
    ui.inputs["request"].value = "Show the last 2 lines of /workspace/todo.md"
    for name in ("parse_only", "outside", "two_servers"):
        ui.inputs[name].value = True
    ui.inputs["server"].value = "arch"
    ui.button.click()  # a real run with all of that
    ui.pin_button.click()  # ... pinned as the baseline
    ui.reset_button.click()  # a fresh baseline with the defaults
    ui.inputs["head"].value = 7
    ui.button.click()
    ui.pin_button.click()  # head 7 is the baseline now
    ui.inputs["request"].value = "Hello"
    ui.button.click()  # an answer in text, no call
    ui.inputs["request"].value = ""
    ui.inputs["tail"].value = 3  # head is 7 too: both asked for
    ui.button.click()
    ui.inputs["path"].value = ""  # and left with no file named
    ui.inputs["dont_send_back"].value = True


@pytest.fixture(scope="module")
def standin_url() -> Iterator[str]:
    """The project's stand-in model over real HTTP (`--vary`): what a learner's key would reach."""
    with running_server(vary=True) as url:
        yield url


@pytest.mark.parametrize(("edition", "model"), [("en", None), ("zh-CN", None), ("en", "gpt-4.1"), ("zh-CN", "gpt-5")],
                         ids=["en-offline", "zh-CN-offline", "en-standin-gpt-4.1", "zh-CN-standin-gpt-5"])
def test_notebook_08_cells_work_whatever_the_learner_clicked(edition, model, monkeypatch, capsys, request):
    """Every code cell of 08, in order, with a learner's clicks in the widget before each cell after
    it is shown; on the offline model, and with a key set on the stand-in (a reasoning model for
    the zh-CN edition: reasoning items, text before calls, reordered arguments, reworded answers)."""
    if model is None:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    else:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-standin")
        monkeypatch.setenv("OPENAI_BASE_URL", request.getfixturevalue("standin_url"))
        monkeypatch.setenv("COURSE_MODEL", model)
    monkeypatch.setenv("COURSE_LANG", edition)
    folder = NOTEBOOKS / ("zh-CN" if edition == "zh-CN" else "")
    cells = json.loads((folder / "08_explore_which_objects_change.ipynb").read_text(encoding="utf-8"))["cells"]
    namespace: dict = {}
    shown = False  # the learner can click once the widget is on the page
    try:
        for cell in (c for c in cells if c["cell_type"] == "code"):
            if shown:
                _learner_clicks(namespace["ui"])
            exec(compile("".join(cell["source"]), f"cell {cell['id']}", "exec"), namespace)  # noqa: S102
            shown = shown or "display(ui)" in "".join(cell["source"])
    finally:
        if "course" in namespace:
            namespace["explorer"].close()
            namespace["course"].close()
    # Each experiment ran with its own inputs and against the baseline its cell pinned, whatever was clicked.
    baseline, head5, parsed_only, not_sent, on_fs, outside = (namespace[n] for n in (
        "baseline", "head5", "parsed_only", "not_sent", "on_fs", "outside"))  # fmt: skip
    request = compose_request(head=5)
    assert [s.request for s in (head5, parsed_only, not_sent)] == [request] * 3
    assert (head5.compared_with, head5.changed, head5.unchanged) == (baseline.run, VALUES | RESULTS, RULES)
    assert json.loads(head5.panels["mcp_result"].text)["structuredContent"]["lines"] == 5
    assert head5.reads_delta == 1 and head5.model_requests == 2
    assert (parsed_only.compared_with, parsed_only.changed) == (head5.run, {"mcp_arguments"} | RESULTS)
    assert parsed_only.panels["mcp_result"].text == ("未执行" if edition == "zh-CN" else NOT_EXECUTED)
    assert parsed_only.reads_delta == 0 and parsed_only.model_requests == 1
    assert not_sent.compared_with == parsed_only.run and not_sent.unchanged >= RULES | {"arguments", "parsed"}
    assert not_sent.changed >= {"mcp_arguments", "mcp_result", "function_call_output", "answer"}
    assert not_sent.model_requests == 1 and not_sent.reads_delta == 1
    assert on_fs.route.endswith("read_text_file") and on_fs.request == compose_request(head=5, server="fs")
    assert outside.request == compose_request(OUTSIDE_PATH, head=5) and outside.compared_with == head5.run
    assert outside.unchanged == RULES and outside.changed >= VALUES | {"mcp_result"}
    assert json.loads(outside.panels["mcp_result"].text)["isError"] is True
    assert namespace["playground"].compared_with is None  # "Your turn" starts from a fresh baseline
    out = capsys.readouterr().out
    naive = ["✓ head 5 ", "✗ parse only ", "✗ outside path "] if edition == "en" else ["✓ head 5 ", "✗ parse_only ", "✗ outside "]
    assert all(line in out for line in naive), out


# ---- any model: shapes a real model sends and the offline model does not ---------------------------------


def _item(kind: str, n: int, **fields) -> dict:
    prefix = {"reasoning": "rs", "message": "msg", "function_call": "fc"}[kind]
    return {"type": kind, "id": f"{prefix}_{n:04x}{'ab' * 10}", **fields}


def say_text(text: str, n: int) -> dict:
    return _item("message", n, role="assistant", status="completed",
                 content=[{"type": "output_text", "text": text, "annotations": []}])


def think(n: int) -> dict:
    return _item("reasoning", n, summary=[])


def call_tool(arguments: str, n: int, name: str = "fs__read_text_file") -> dict:
    return _item("function_call", n, call_id=f"call_{n:08x}zz", name=name, arguments=arguments, status="completed")


class Scripted:
    """A model of the test's own, with a real model's habits (a course-like object for `Explorer`):
    request k is answered with `turns[k](body)`, the output items, in a Response the SDK validates
    strictly; a dated model name, ids that differ in every response."""

    def __init__(self, *turns) -> None:
        self.turns, self.count = list(turns), 0
        self.wire = HttpCapture(httpx.MockTransport(self._answer))
        self.client = openai.OpenAI(api_key="test", base_url="http://model.invalid/v1", max_retries=0,
                                    http_client=httpx.Client(transport=self.wire), _strict_response_validation=True)

    def _answer(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.count += 1
        output = self.turns.pop(0)(body, self.count * 16)
        return httpx.Response(200, json={
            "id": f"resp_{self.count:04x}", "object": "response", "created_at": 1_790_000_000 + self.count,
            "model": "gpt-4.1-2025-04-14", "status": "completed", "output": output, "parallel_tool_calls": True,
            "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools", []),
        })  # fmt: skip


def _fed_back(body: dict) -> str:
    return next(item["output"] for item in body["input"] if item.get("type") == "function_call_output")


def _reads_then_answers(arguments: str):
    """Reasoning, a sentence, then the call; after the result, a reworded answer quoting it."""
    return (lambda body, n: [think(n), say_text("Let me read that file for you.", n + 1), call_tool(arguments, n + 2)],
            lambda body, n: [say_text(f"Sure! Here are the {len(_fed_back(body).splitlines())} lines:\n\n"
                                      f"{_fed_back(body)[:80]}\n\nAnything else?", n)])


def test_any_model_reasoning_and_text_before_the_call():
    model = Scripted(*_reads_then_answers('{"path":"/workspace/notes.txt","head":20}'),
                     *_reads_then_answers('{ "head": 5,  "path": "/workspace/notes.txt" }'))  # keys in another order
    with Explorer(model) as explorer:
        explorer.run(head=20)
        snap = explorer.run(head=5)
    assert snap.panels["arguments"].text == '{ "head": 5,  "path": "/workspace/notes.txt" }'  # the call, as sent
    assert json.loads(snap.panels["mcp_arguments"].text) == {"head": 5, "path": "/workspace/notes.txt"}
    assert snap.unchanged == RULES and snap.changed == VALUES | RESULTS
    assert snap.ids["call_id"].text == snap.calls[0].call_id == call_tool("", 16 * 3 + 2)["call_id"]
    assert snap.panels["answer"].text.startswith("Sure! Here are the 5 lines:\n\nA tool call involves")
    assert json.loads(snap.panels["mcp_result"].text)["structuredContent"]["lines"] == 5
    assert kinds(snap.exchanges[1].request["input"]) == [None, "reasoning", "message", "function_call", "function_call_output"]


def test_any_model_one_call_with_head_and_tail_is_refused_by_the_tool():
    both = '{"path":"/workspace/notes.txt","head":20,"tail":3}'
    model = Scripted(*_reads_then_answers('{"path":"/workspace/notes.txt","head":20}'), *_reads_then_answers(both))
    with Explorer(model) as explorer:
        explorer.run(head=20)
        snap = explorer.run(head=20, tail=3)
    assert snap.panels["arguments"].text == both
    assert snap.panels["parsed"].text.endswith("\n✗ Cannot specify both head and tail parameters simultaneously")
    (made,) = snap.calls
    assert made.result["isError"] is True and "Cannot specify both head and tail" in made.result["content"][0]["text"]
    assert json.loads(made.output)["ok"] is False and snap.reads_delta == 0
    assert snap.unchanged == RULES and snap.changed == VALUES | RESULTS


def test_any_model_declines_the_outside_path_in_text():
    model = Scripted(*_reads_then_answers('{"path":"/workspace/notes.txt","head":5}'),
                     lambda body, n: [think(n), say_text("I can only read files under /workspace, so I won't try.", n + 1)])
    with Explorer(model) as explorer:
        explorer.run(head=5)
        snap = explorer.run(head=5, outside=True)
    assert snap.calls == [] and snap.reads_delta == 0 and snap.model_requests == 1
    assert snap.unchanged == RULES and snap.changed == VALUES | RESULTS
    assert snap.panels["answer"].text == "I can only read files under /workspace, so I won't try."
    assert snap.panels["mcp_result"].text == "not executed: no call"


def test_any_model_calls_a_tool_that_was_never_declared():
    model = Scripted(*_reads_then_answers('{"path":"/workspace/notes.txt","head":5}'),
                     lambda body, n: [call_tool('{"path":"/workspace/notes.txt"}', n, name="read_file")],
                     lambda body, n: [say_text("That tool does not exist, sorry.", n)])
    with Explorer(model) as explorer:
        base = explorer.run(head=5)
        snap = explorer.run(head=5)
    assert snap.route == "model called read_file: no such tool"
    assert snap.panels["parameters"].text == base.panels["parameters"].text  # the declaration asked for, as sent
    assert snap.panels["mcp_arguments"].text == "not sent" and snap.panels["mcp_result"].text == NOT_EXECUTED
    assert json.loads(snap.calls[0].output)["error"]["kind"] == "app" and snap.ids["mcp_id"].text == "not sent"
    assert snap.reads_delta == 0 and snap.panels["answer"].text == "That tool does not exist, sorry."


@pytest.mark.parametrize("model", ["gpt-4.1", "gpt-5"])  # gpt-5: a reasoning item before every output
def test_the_standin_model_every_case_of_item_6(model, monkeypatch):
    """The project's stand-in (a second model that varies as real ones do), in-process: each case of
    issue 27 item 6 against one baseline, the rules always the declarations sent."""
    monkeypatch.setenv("COURSE_MODEL", model)
    wire = HttpCapture(standin_transport())
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # make_client's offline branch: strict SDK validation
    course = SimpleNamespace(wire=wire, client=make_client(transport=wire))
    with Explorer(course) as explorer:
        base = explorer.run(head=20)
        first = base.exchanges[0].response
        assert kinds(first)[-1] == "function_call" and kinds(first)[-2] == "message"  # text before the call
        assert ("reasoning" in kinds(first)) == (model == "gpt-5")
        assert json.loads(base.panels["arguments"].text) == {"path": "/workspace/notes.txt", "head": 20}
        cases = {"hello": explorer.run("Hello"), "empty path": explorer.run(path=""),
                 "head and tail": explorer.run(head=20, tail=3), "outside": explorer.run(head=20, outside=True)}
    for case, snap in cases.items():
        assert snap.compared_with == base.run and snap.unchanged >= RULES, case
        assert all(snap.panels[n].text == base.panels[n].text for n in RULES), case
        assert snap.changed >= VALUES, (case, snap.unchanged)
    for case in ("hello", "empty path"):
        snap = cases[case]
        assert snap.calls == [] and snap.reads_delta == 0 and snap.panels["answer"].text, case
        assert snap.panels["answer"].text == snap.exchanges[-1].response["output"][-1]["content"][0]["text"]
    both = cases["head and tail"]
    assert [json.loads(c.arguments) for c in both.calls] == [{"path": "/workspace/notes.txt", "head": 20},
                                                              {"path": "/workspace/notes.txt", "tail": 3}]
    assert both.reads_delta == 2 and both.changed == VALUES | RESULTS
    (refused,) = cases["outside"].calls
    assert refused.error_code == "FORBIDDEN" and cases["outside"].reads_delta == 0
