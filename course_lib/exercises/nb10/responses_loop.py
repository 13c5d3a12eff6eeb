"""Notebook 10, drill 8: the Responses loop from scratch (the most common live-coding ask).

`check_responses_loop(fn)`: the learner's `run_loop(client, model, task, tools, execute,
max_steps=5) -> str` runs against the offline model through the real openai SDK and the real
files server: one read, two reads in one turn, a read that fails, a message that needs no tool,
two reads from a reasoning model (its reasoning item must go back before its calls), then two
models that misbehave — one that never stops calling, one whose response is cut off
(`status: "incomplete"`). The answer must be the one the full context gives, and each mistake a
learner really makes is named from what the model API said (a 400 names the broken item).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from course_lib.exercises import failed, passed
from course_lib.exercises.answers import difference, raised, shown
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.nb10._common import _case, _function, _returned
from course_lib.exercises.nb10.pairing import _offline_client
from course_lib.lang import language, say

MAX_STEPS = 3
CASES = {
    "one read": "Show the first 3 lines of /workspace/notes.txt",
    "two reads in one response": "Show the first 2 lines of /workspace/notes.txt and the first 2 lines of /workspace/todo.md",
    "a read that fails": "Show the first 2 lines of /workspace/missing.txt",
    "no tool needed": "Hello there",
    "two reads from a reasoning model": "Show the first 2 lines of /workspace/notes.txt and the first 2 lines of /workspace/todo.md",
}  # fmt: skip
"""label → the user's task; the right answer is what the reference loop gets from the same model.
The last case runs on a reasoning model (`reasoning_model`): its output puts a reasoning item before
the calls, and the API wants it back there (`api_rules`: a function_call without its reasoning item
is refused), so a loop that reorders or filters the model's items fails it."""


def _model_for(label: str) -> str:
    from course_lib.exercises.nb04 import reasoning_model
    from course_lib.exercises.offline import model_name

    return reasoning_model() if "reasoning model" in label else model_name()

API_MISTAKES = (
    ("No tool output found for function call",
     "a function_call went back without its function_call_output: run every call of the response (walk all "
     "of response.output, not output[0]) and send one output per call_id.",
     "有一个 function_call 发回去时没有带上它的 function_call_output：响应里的每个调用都要运行（遍历整个 "
     "response.output，而不是只看 output[0]），并且每个 call_id 发一个输出。"),
    ("No tool call found for function call output with call_id fc_",
     "that is the item's id (fc_…), not its call_id: the output must carry call.call_id.",
     "那是这个项的 id（fc_…），不是它的 call_id：输出必须带上 call.call_id。"),
    ("No tool call found for function call output",
     "the outputs went back without the model's own items: append every item of response.output to the input "
     "first (the function_call itself), then one function_call_output per call.",
     "输出发回去了，却没有带上模型自己的项：先把 response.output 的每一项都追加到 input 里（包括 function_call 本身），"
     "再为每个调用发一个 function_call_output。"),
    ("Unknown parameter",
     "item.model_dump() adds fields the API refuses (None values, Python names): send item.to_dict() or the "
     "typed item itself.",
     "item.model_dump() 会加上 API 拒绝的字段（None 值、Python 的字段名）：发送 item.to_dict()，或者直接发送带类型的项本身。"),
    ("without its required 'reasoning' item",
     "a reasoning model's function_call went back without the reasoning item before it: append every item of "
     "response.output, in the order the model gave them, before the outputs.",
     "推理模型的 function_call 发回去时，前面没有带上它的 reasoning 项：把 response.output 的每一项按模型给出的顺序"
     "追加进去，再追加输出。"),
    ("without its required following item",
     "a reasoning item went back without the model's item that followed it: append every item of response.output, "
     "in the order the model gave them.",
     "一个 reasoning 项发回去时，后面没有带上模型跟在它后面的那一项：把 response.output 的每一项按模型给出的顺序追加进去。"),
    ("Invalid type for",
     "function_call_output.output is text (or a list of content parts): send execute(call)'s string as it is.",
     "function_call_output.output 是文本（或内容部分的列表）：把 execute(call) 返回的字符串原样发出。"),
)  # fmt: skip
"""(what the 400 says, the mistake behind it, 中文): the first that matches names the learner's mistake."""


class _Runaway(BaseException):
    """Raised by the test client when a loop keeps asking long after its budget. A BaseException,
    so a loop that catches every Exception (and asks again) is still stopped."""


class _Client:
    """The client handed to the learner: it counts requests and can play a misbehaving model."""

    def __init__(self, client: Any, task: str, mode: str = "normal") -> None:
        self._client, self.task, self.mode, self.requests, self.responses = client, task, mode, 0, self

    def create(self, **request: Any) -> Any:
        self.requests += 1
        if self.requests > MAX_STEPS + 5:
            raise _Runaway(f"{self.requests} model requests")
        if self.mode == "never stops":  # the model asks for the same read again and again, whatever it is sent
            request = {key: value for key, value in request.items() if key != "previous_response_id"}
            request["input"] = [{"role": "user", "content": self.task}]
        response = self._client.responses.create(**request)
        if self.mode == "cut off":
            from openai.types.responses.response import IncompleteDetails

            return response.model_copy(update={"status": "incomplete",
                                               "incomplete_details": IncompleteDetails(reason="max_output_tokens")})  # fmt: skip
        return response


def _execute(host: Any) -> Callable[[Any], str]:
    from course_lib.loop import execute_call

    def execute(call: Any) -> str:
        """Run one function_call item through the course's app (parse, route, tools/call); its output text."""
        return execute_call(call, host)[0]["output"]

    return execute


def _run(fn: Any, task: str, mode: str = "normal", model: str | None = None) -> tuple[Any, _Client]:
    from course_lib.exercises.offline import model_name
    from course_lib.host import files_host

    with files_host() as host:
        client = _Client(_offline_client(), task, mode)
        try:
            return fn(client, model or model_name(), task, host.responses_tools(), _execute(host),
                      max_steps=MAX_STEPS), client  # fmt: skip
        finally:
            client._client.close()


def _reference(task: str, model: str | None = None) -> tuple[str, int]:
    """The answer the reference loop gets for `task`, and how many model requests it made (once per
    task, model and edition: the offline model may word an answer in the edition's language)."""
    from course_lib.exercises.offline import model_name

    return _reference_in(task, model or model_name(), language())


@cache
def _reference_in(task: str, model: str, edition: str) -> tuple[str, int]:
    answer, client = _run(_loop_solution, task, model=model)
    return answer, client.requests


def _api_mistake(error: Exception) -> str | None:
    import openai

    if not isinstance(error, openai.BadRequestError):
        return None
    text = str(error)
    return next((say(en, zh) for says, en, zh in API_MISTAKES if says in text),
                say("the model API refused the request: {text}", "模型 API 拒绝了这个请求：{text}", text=text))


def check_responses_loop(fn: Any) -> bool:
    """Run the learner's `run_loop` on real tasks and misbehaving models; name the first mistake."""
    if problem := _function(fn, "run_loop", "client, model, task, tools, execute, max_steps=5"):
        return failed(problem)
    for label, task in CASES.items():
        case = _case(label)
        try:
            answer, client = _run(fn, task, model=_model_for(label))
        except _Runaway:
            return failed(say("{case}: your loop was still asking after {n} model requests, with max_steps={cap}: stop "
                              "at the first response without a function_call, and after max_steps requests.",
                              "{case}：max_steps={cap}，你的循环在 {n} 次模型请求之后还在请求：遇到第一个没有 function_call "
                              "的响应就停下，最多 max_steps 次请求。", case=case, n=MAX_STEPS + 5, cap=MAX_STEPS))
        except Exception as error:
            why = _api_mistake(error) or say("run_loop raised {error}", "run_loop 抛出了 {error}", error=raised(error))
            return failed(say("{case}: {why}", "{case}：{why}", case=case, why=why))
        right, requests = _reference(task, _model_for(label))
        if not isinstance(answer, str):
            return failed(say("{case}: return the final answer text (response.output_text), not {got}",
                              "{case}：请返回最终回答的文本（response.output_text），而不是 {got}", case=case,
                              got=_returned(answer)))
        if answer != right:
            hint = (say("the response held two function_call items: run both and send both outputs before asking again.",
                        "响应里有两个 function_call 项：两个都要运行，把两个输出都发回去，然后再请求。")
                    if label == "two reads in one response" else
                    say("ask again with the whole context until a response holds no function_call, then return its "
                        "output_text.", "带着完整的上下文继续请求，直到某个响应里没有 function_call，再返回它的 output_text。"))  # fmt: skip
            got, right = difference(answer, right, 60)
            return failed(say("{case}: your answer {got} is not the one the full context gives ({right}): {hint}",
                              "{case}：你的回答 {got} 不是完整上下文给出的那个（{right}）：{hint}",
                              case=case, got=got, right=right, hint=hint))
        if client.requests != requests:
            return failed(say("{case}: {n} model requests, the loop needs {m}: stop at the first response without a "
                              "function_call.",
                              "{case}：发了 {n} 次模型请求，这个循环只需要 {m} 次：遇到第一个没有 function_call 的响应就停下。",
                              case=case, n=client.requests, m=requests))
    for mode, model, why in (
        ("never stops", ("a model that never stops", "永不停止的模型"),
         ("stop after max_steps ({cap}) model requests with raise RuntimeError: a loop needs its own end.",
          "在 max_steps（{cap}）次模型请求之后用 raise RuntimeError 停下：循环需要自己的终点。")),
        ("cut off", ("a response cut off at max_output_tokens", "在 max_output_tokens 处被截断的响应"),
         ("check response.status: 'incomplete' (incomplete_details.reason 'max_output_tokens') is not a final answer; "
          "raise RuntimeError.",
          "检查 response.status：'incomplete'（incomplete_details.reason 为 'max_output_tokens'）不是最终回答；"
          "请 raise RuntimeError。")),
    ):  # fmt: skip
        who, because = say(*model), say(*why, cap=MAX_STEPS)
        try:
            answer, client = _run(fn, CASES["one read"], mode)
        except RuntimeError:
            continue
        except _Runaway:
            return failed(say("{who}: your loop was still asking after {n} requests; {why}",
                              "{who}：你的循环在 {n} 次请求之后还在请求；{why}", who=who, n=MAX_STEPS + 5, why=because))
        except Exception as error:
            return failed(say("{who}: raise RuntimeError, not {error}", "{who}：请 raise RuntimeError，而不是 {error}",
                              who=who, error=raised(error)))
        return failed(say("{who}: you returned {got} after {n} requests; {why}",
                          "{who}：你在 {n} 次请求之后返回了 {got}；{why}",
                          who=who, got=shown(answer, 60), n=client.requests, why=because))
    return passed(say("the loop sends the whole context, one output per call_id, stops at a final message, and ends "
                      "on its budget and on an incomplete response.",
                      "这个循环发送完整的上下文，每个 call_id 一个输出，遇到最终消息就停下，"
                      "并且在预算用尽和响应不完整时结束。"))


def _loop_solution(client: Any, model: str, task: str, tools: list[dict[str, Any]], execute: Callable[[Any], str],
                   max_steps: int = 5) -> str:  # fmt: skip
    items: list[Any] = [{"role": "user", "content": task}]
    for _ in range(max_steps):
        response = client.responses.create(model=model, input=items, tools=tools)
        if response.status != "completed":
            raise RuntimeError(f"response {response.status}: {response.incomplete_details}")
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return response.output_text
        items += [item.to_dict() for item in response.output]
        items += [{"type": "function_call_output", "call_id": call.call_id, "output": execute(call)} for call in calls]
    raise RuntimeError(f"no final answer after {max_steps} model requests")


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
