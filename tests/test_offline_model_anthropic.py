"""Anthropic parity, through the anthropic SDK itself (strict response validation): the beta tool
runner (message threads, with its beta header), `count_tokens`, the models list in Anthropic's
shape, and thinking blocks when thinking is enabled."""

from __future__ import annotations

import json

import anthropic
import httpx
import pytest
from anthropic import beta_tool
from anthropic.types import ModelInfo, ThinkingBlock

from course_lib.backend import make_anthropic_client
from course_lib.offline_model import offline_transport, threads
from course_lib.paths import workspace_dir

MODEL = "claude-sonnet-4-6"
TASK = "Show the first 2 lines of /workspace/notes.txt"
FIRST_2 = "".join((workspace_dir() / "notes.txt").read_text(encoding="utf-8").splitlines(keepends=True)[:2])
READER = {"name": "read_text_file", "description": "Read a text file",
          "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}},
                           "required": ["path"]}}  # fmt: skip


class Recorder(httpx.BaseTransport):
    """The offline model in-process, keeping each request's headers and body."""

    def __init__(self) -> None:
        self.inner, self.requests = offline_transport(), []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((dict(request.headers), json.loads(request.content or b"null")))
        return self.inner.handle_request(request)


@beta_tool
def read_text_file(path: str, head: int | None = None) -> str:
    """Read a text file of the workspace.

    Args:
        path: the file's path, under /workspace
        head: how many lines from the top
    """
    lines = (workspace_dir() / path.removeprefix("/workspace/")).read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(lines[:head] if head else lines)


# ---- the beta tool runner: message threads ---------------------------------------------------------


def test_the_sdks_beta_tool_runner_runs_the_read_over_a_message_thread():
    recorder = Recorder()
    with make_anthropic_client(transport=recorder) as client:
        runner = client.beta.messages.tool_runner(model=MODEL, max_tokens=1024, tools=[read_text_file],
                                                  messages=[{"role": "user", "content": TASK}])  # fmt: skip
        replies = list(runner)
    assert [reply.stop_reason for reply in replies] == ["tool_use", "end_turn"]
    assert replies[-1].content[0].text == f"Here are the first 2 lines of /workspace/notes.txt, as returned by " \
                                          f"read_text_file:\n\n{FIRST_2}"
    (first_headers, first), (second_headers, second) = recorder.requests
    assert threads.BETA in first_headers["anthropic-beta"] and threads.BETA in second_headers["anthropic-beta"]
    assert first["thread"] == {"type": "create"} and "tools" in first
    # The continue turn carries only what is new: the server holds the history, the tools and system.
    assert second["thread"] == {"type": "continue", "previous_message_id": replies[0].id}
    assert [block["type"] for message in second["messages"] for block in message["content"]] == ["tool_result"]
    assert "tools" not in second and "system" not in second


def test_the_streaming_tool_runner_too():
    with make_anthropic_client() as client:
        runner = client.beta.messages.tool_runner(model=MODEL, max_tokens=1024, tools=[read_text_file], stream=True,
                                                  messages=[{"role": "user", "content": TASK}])  # fmt: skip
        finals = [stream.get_final_message() for stream in runner]
    assert finals[-1].content[0].text.endswith(FIRST_2)


def beta_create(client, **body):
    return client.beta.messages.create(model=MODEL, max_tokens=256, betas=[threads.BETA], **body)


def test_a_thread_is_continued_once_and_only_with_the_threads_beta(claude):
    first = beta_create(claude, tools=[READER], messages=[{"role": "user", "content": TASK}], thread={"type": "create"})
    result = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[0].id,
                                             "content": FIRST_2}]}]  # fmt: skip
    cont = {"type": "continue", "previous_message_id": first.id}
    with pytest.raises(anthropic.BadRequestError, match="tools: the thread holds it"):
        beta_create(claude, tools=[READER], messages=result, thread=cont)  # a continue may not repeat them
    final = beta_create(claude, messages=result, thread=cont)
    assert final.content[0].text.endswith(FIRST_2)
    with pytest.raises(anthropic.BadRequestError) as again:
        beta_create(claude, messages=result, thread=cont)
    assert again.value.body["error"]["details"] == {"error_code": "thread_already_continued"}  # what the SDK reads
    with pytest.raises(anthropic.BadRequestError) as lost:
        beta_create(claude, messages=result, thread={"type": "continue", "previous_message_id": "msg_never"})
    assert lost.value.body["error"]["details"] == {"error_code": "thread_not_found"}
    with pytest.raises(anthropic.BadRequestError, match="thread: Extra inputs are not permitted"):
        claude.messages.create(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "hi"}],
                               extra_body={"thread": {"type": "create"}})  # no beta header: an unknown key


# ---- count_tokens ---------------------------------------------------------------------------------


def test_count_tokens_answers_in_anthropics_shape_and_matches_the_replys_usage(claude):
    prompt = {"model": MODEL, "messages": [{"role": "user", "content": TASK}], "tools": [READER]}
    counted = claude.messages.count_tokens(**prompt)
    assert type(counted).__name__ == "MessageTokensCount" and counted.input_tokens > 0
    assert claude.messages.create(max_tokens=256, **prompt).usage.input_tokens == counted.input_tokens
    with pytest.raises(anthropic.BadRequestError, match="max_tokens: Extra inputs are not permitted"):
        claude.messages.count_tokens(**prompt, extra_body={"max_tokens": 5})


# ---- the models list --------------------------------------------------------------------------------


def test_the_models_list_answers_each_sdk_in_its_own_shape(claude, client):
    page = claude.models.list()
    assert [model.id for model in page.data] == [MODEL] and isinstance(page.data[0], ModelInfo)
    assert page.has_more is False and claude.models.retrieve("claude-opus-4-1").type == "model"
    assert [model.id for model in client.models.list().data] == ["gpt-4.1"]  # the openai SDK: OpenAI's shape


# ---- thinking -----------------------------------------------------------------------------------------


def test_thinking_enabled_puts_a_signed_thinking_block_first(claude):
    message = claude.messages.create(model=MODEL, max_tokens=2048, tools=[READER], messages=[
        {"role": "user", "content": TASK}], thinking={"type": "enabled", "budget_tokens": 1024})  # fmt: skip
    thinking, use = message.content
    assert isinstance(thinking, ThinkingBlock) and thinking.signature
    assert thinking.thinking == 'I call read_text_file with {"path": "/workspace/notes.txt", "head": 2}.'
    assert use.type == "tool_use" and use.input == {"path": "/workspace/notes.txt", "head": 2}
    history = [{"role": "user", "content": TASK}, {"role": "assistant", "content": [b.model_dump() for b in message.content]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": FIRST_2}]}]
    final = claude.messages.create(model=MODEL, max_tokens=2048, tools=[READER], messages=history,
                                   thinking={"type": "adaptive"})  # fmt: skip
    assert final.content[0].thinking == "The tool results are in: I answer from them and nothing else."
    assert final.content[1].text.endswith(FIRST_2)
    none = claude.messages.create(model=MODEL, max_tokens=256, messages=[{"role": "user", "content": "hi"}],
                                  thinking={"type": "disabled"})  # fmt: skip
    assert [block.type for block in none.content] == ["text"]


def test_a_streamed_thinking_block_arrives_in_pieces_then_its_signature(claude):
    kwargs = dict(model=MODEL, max_tokens=2048, tools=[READER], messages=[{"role": "user", "content": TASK}],
                  thinking={"type": "enabled", "budget_tokens": 1024})  # fmt: skip
    with claude.messages.stream(**kwargs) as stream:
        kinds = [event.delta.type for event in stream if event.type == "content_block_delta"]
        final = stream.get_final_message()
    assert kinds.count("thinking_delta") > 1 and kinds.count("signature_delta") == 1
    assert final.content[0].thinking == claude.messages.create(**kwargs).content[0].thinking


def test_display_omitted_keeps_the_signature_and_no_text(claude):
    message = claude.messages.create(model=MODEL, max_tokens=2048, messages=[{"role": "user", "content": "hi"}],
                                     thinking={"type": "enabled", "budget_tokens": 1024, "display": "omitted"})
    assert message.content[0].thinking == "" and message.content[0].signature


@pytest.mark.parametrize(("max_tokens", "thinking", "message"), [
    (2048, {"type": "enabled", "budget_tokens": 512},
     "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"),
    (1024, {"type": "enabled", "budget_tokens": 1024}, "`max_tokens` must be greater than `thinking.budget_tokens`"),
])  # fmt: skip
def test_a_thinking_budget_the_real_api_refuses_is_a_400_in_its_words(claude, max_tokens, thinking, message):
    with pytest.raises(anthropic.BadRequestError, match=message.replace("`", "\\`")):
        claude.messages.create(model=MODEL, max_tokens=max_tokens, messages=[{"role": "user", "content": "hi"}],
                               thinking=thinking)
