"""Notebook 10, drill 8: the Responses loop from scratch (the most common live-coding ask).

`check_responses_loop(fn)`: the learner's `run_loop(client, model, task, tools, execute,
max_steps=5) -> str` runs against the offline model through the real openai SDK and the real
files server: one read, two reads in one turn, a read that fails, a message that needs no tool,
then two models that misbehave — one that never stops calling, one whose response is cut off
(`status: "incomplete"`). The answer must be the one the full context gives, and each mistake a
learner really makes is named from what the model API said (a 400 names the broken item).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from course_lib.exercises import failed, passed
from course_lib.exercises.nb10._common import _function
from course_lib.exercises.nb10.pairing import _offline_client

MAX_STEPS = 3
CASES = {
    "one read": "Show the first 3 lines of /workspace/notes.txt",
    "two reads in one response": "Show the first 2 lines of /workspace/notes.txt and the first 2 lines of /workspace/todo.md",
    "a read that fails": "Show the first 2 lines of /workspace/missing.txt",
    "no tool needed": "Hello there",
}  # fmt: skip
"""label → the user's task; the right answer is what the reference loop gets from the same model."""

API_MISTAKES = (
    ("No tool output found for function call",
     "a function_call went back without its function_call_output: run every call of the response (walk all "
     "of response.output, not output[0]) and send one output per call_id."),
    ("No tool call found for function call output with call_id fc_",
     "that is the item's id (fc_…), not its call_id: the output must carry call.call_id."),
    ("No tool call found for function call output",
     "the outputs went back without the model's own items: append every item of response.output to the input "
     "first (the function_call itself), then one function_call_output per call."),
    ("Unknown parameter",
     "item.model_dump() adds fields the API refuses (None values, Python names): send item.to_dict() or the "
     "typed item itself."),
    ("Invalid type for",
     "function_call_output.output is text (or a list of content parts): send execute(call)'s string as it is."),
)  # fmt: skip
"""(what the 400 says, the mistake behind it): the first that matches names the learner's mistake."""


class _Runaway(Exception):
    """Raised by the test client when a loop keeps asking long after its budget."""


class _Client:
    """The client handed to the learner: it counts requests and can play a misbehaving model."""

    def __init__(self, client: Any, mode: str = "normal") -> None:
        self._client, self.mode, self.requests, self.responses = client, mode, 0, self

    def create(self, **request: Any) -> Any:
        self.requests += 1
        if self.requests > MAX_STEPS + 5:
            raise _Runaway(f"{self.requests} model requests")
        if self.mode == "never stops":  # the model asks for the same read again and again
            request = {**request, "input": [request["input"][0]]}
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


def _run(fn: Any, task: str, mode: str = "normal") -> tuple[Any, _Client]:
    from course_lib.backend import model_name
    from course_lib.host import files_host

    with files_host() as host:
        client = _Client(_offline_client(), mode)
        try:
            return fn(client, model_name(), task, host.responses_tools(), _execute(host), max_steps=MAX_STEPS), client
        finally:
            client._client.close()


def _api_mistake(error: Exception) -> str | None:
    import openai

    if not isinstance(error, openai.BadRequestError):
        return None
    text = str(error)
    return next((why for says, why in API_MISTAKES if says in text), f"the model API refused the request: {text}")


def check_responses_loop(fn: Any) -> bool:
    """Run the learner's `run_loop` on real tasks and misbehaving models; name the first mistake."""
    if problem := _function(fn, "run_loop", "client, model, task, tools, execute, max_steps=5"):
        return failed(problem)
    for label, task in CASES.items():
        try:
            answer, client = _run(fn, task)
        except Exception as error:
            why = _api_mistake(error) or f"run_loop raised {type(error).__name__}: {error}"
            return failed(f"case '{label}': {why}")
        right, expected = _run(_loop_solution, task)
        if not isinstance(answer, str):
            return failed(f"case '{label}': return the final answer text (response.output_text), not {answer!r:.60}.")
        if answer != right:
            hint = ("the response held two function_call items: run both and send both outputs before asking again."
                    if label == "two reads in one response" else "ask again with the whole context until a response "
                    "holds no function_call, then return its output_text.")  # fmt: skip
            return failed(f"case '{label}': your answer {answer[:60]!r}… is not the one the full context gives "
                          f"({right[:60]!r}…): {hint}")
        if client.requests != expected.requests:
            return failed(f"case '{label}': {client.requests} model requests, the loop needs {expected.requests}: "
                          "stop at the first response without a function_call.")
    for mode, why in (("never stops", f"stop after max_steps ({MAX_STEPS}) model requests with raise RuntimeError: "
                                      "a loop needs its own end."),
                      ("cut off", "check response.status: 'incomplete' (incomplete_details.reason "
                                  "'max_output_tokens') is not a final answer; raise RuntimeError.")):  # fmt: skip
        try:
            answer, client = _run(fn, CASES["one read"], mode)
        except RuntimeError:
            continue
        except _Runaway:
            return failed(f"a model that never stops: your loop was still asking after {MAX_STEPS + 5} requests; {why}")
        except Exception as error:
            return failed(f"a model that {mode}: raise RuntimeError, not {type(error).__name__}: {error}")
        return failed(f"a model that {'never stops' if mode == 'never stops' else 'is cut off'}: you returned "
                      f"{answer!r:.60} after {client.requests} requests; {why}")
    return passed("the loop sends the whole context, one output per call_id, stops at a final message, and ends "
                  "on its budget and on an incomplete response.")


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
