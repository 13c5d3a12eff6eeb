"""The guard every check runs under: a time limit, a bound on what the learner's code prints, and
one line (never a library traceback) whatever happens inside.

    from course_lib.exercises.guard import guard_checks
    guard_checks(globals())          # the last line of an exercise module: wraps every check_…

A learner's answer is code, and code can loop forever, wait on a lock that never opens, or print
a line on each of the thousands of calls a check makes. A check is a teacher, so it must still
answer within a few seconds with one line that names what happened:

- **Time limit** (`LIMIT_SECONDS`). In the main thread (a notebook cell runs there) a real-time
  timer (`signal.setitimer`) raises `CheckTimeout` wherever the code is, `time.sleep` and lock
  waits included. Elsewhere (a check called from another thread, or Windows) a watchdog thread
  raises it in the check's thread between two bytecodes (`PyThreadState_SetAsyncExc`; a sleep
  there ends first). After the
  first, it is raised again every `REPEAT_SECONDS` while the learner's code is still on the stack
  (an `except BaseException:` that swallowed it; in the main thread every line of the learner's
  code then raises it, through a trace function), and in any thread the check started that runs
  the learner's code (an `async def` answer on an event loop of its own), so neither keeps the
  kernel busy.
  `CheckTimeout` derives from `BaseException`, so `except Exception:` in an answer lets it through.
- **Bounded output**: while a check runs, `sys.stdout` and `sys.stderr` show the first
  `SHOWN_LINES` lines the learner's code prints, then only count; the verdict line says how many
  were hidden. The verdict itself goes to the stream that was there before (`verdict_stream`).
- **One line, whatever happens**: an exception the check itself did not expect becomes a ✗ line
  that says so (`COURSE_CHECKS_STRICT=1` re-raises it instead: the tests set it, so a fault of a
  check fails the build rather than hiding behind a polite line).
- **Who called**: the globals of the cell that called the check (`caller_namespace`), so a
  message can name a function the learner defined but did not pass (`answers.unassigned`).

A check that calls another check (nb10 re-exports a drill) runs under the outer guard only.
"""

from __future__ import annotations

import ctypes
import functools
import inspect
import io
import linecache
import os
import signal
import sys
import sysconfig
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, TextIO, TypeVar

from course_lib.lang import say

LIMIT_SECONDS = 30.0
"""How long one check may run, the learner's code included (the slowest reference answer needs 2 s)."""
REPEAT_SECONDS = 0.25
"""After the limit, how often the timeout is raised again while the learner's code still runs."""
SHOWN_LINES = 20
"""Lines of the learner's own printing shown while a check runs; the rest are counted, not shown."""
SHOWN_CHARACTERS = 4000
"""…and at most this many characters of it (one very long line counts as many)."""

F = TypeVar("F", bound=Callable[..., Any])


class CheckTimeout(BaseException):
    """Raised where the learner's code runs when a check's time is up. A `BaseException`, so an
    answer's `except Exception:` does not swallow it."""


# ---- where the learner's code is ------------------------------------------------------------------

_COURSE_LIB = str(Path(__file__).resolve().parent.parent)
_LIBRARY_ROOTS = tuple({str(Path(p).resolve()) for p in (sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"],
                                                         sysconfig.get_paths()["platlib"], sys.prefix, sys.base_prefix)})  # fmt: skip


def is_learner_code(filename: str) -> bool:
    """True for code that is neither the course's library nor Python's or an installed package's:
    a notebook cell (`/tmp/ipykernel_…/….py`, `<ipython-input-…>`), a learner's own module, a test,
    code compiled at run time (`<string>`)."""
    if filename.startswith("<"):  # <ipython-input-…>, <stdin>, <string>: code typed or built at run time
        return not filename.startswith("<frozen")
    try:
        path = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    return not path.startswith(_COURSE_LIB) and not path.startswith(_LIBRARY_ROOTS)


def _frames(frame: FrameType | None, until: FrameType | None = None) -> Iterator[FrameType]:
    """`frame` and its callers, innermost first, up to (not including) `until`."""
    while frame is not None and frame is not until:
        yield frame
        frame = frame.f_back


def _runs_learner_code(frame: FrameType | None, until: FrameType | None = None) -> bool:
    """True when the learner's code is on the stack from `frame` up to `until` (the check's caller,
    itself a learner's cell, is above `until` and does not count)."""
    return any(is_learner_code(f.f_code.co_filename) for f in _frames(frame, until))


def _learner_line(frame: FrameType | None, until: FrameType | None = None) -> str:
    """`line 3: while True:` of the innermost frame of the learner's code from `frame` up to `until`, or ''."""
    for f in _frames(frame, until):
        if is_learner_code(f.f_code.co_filename):
            code = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()[:80]
            return say("line {n}: {code}", "第 {n} 行：{code}", n=f.f_lineno, code=code)
    return ""


# ---- the guard ------------------------------------------------------------------------------------


class _Guard:
    """The state of the check that runs now (one per thread)."""

    def __init__(self, check: Callable[..., Any], caller: dict[str, Any] | None, verdicts: TextIO) -> None:
        self.check, self.caller, self.verdicts = check, caller, verdicts
        self.shown_lines = self.shown_characters = self.hidden_lines = 0
        self.hidden_partial = False  # a hidden line not ended yet
        self.expired = self.disarmed = False
        self.reported = False
        self.where = ""  # the learner's line that was running when the time ran out
        self.boundary: FrameType | None = None  # the guard's own frame: above it is the check's caller
        self.seconds = LIMIT_SECONDS


_state = threading.local()


def _active() -> _Guard | None:
    return getattr(_state, "guard", None)


def verdict_stream() -> TextIO:
    """Where a verdict is printed: the stream that was `sys.stdout` when the check began."""
    guard = _active()
    return guard.verdicts if guard is not None else sys.stdout


def caller_namespace() -> dict[str, Any] | None:
    """The globals of the code that called the running check (a notebook cell's namespace)."""
    guard = _active()
    return guard.caller if guard is not None else None


def running_check() -> Callable[..., Any] | None:
    """The check the guard runs now (the function itself, unwrapped), or None."""
    guard = _active()
    return guard.check if guard is not None else None


def take_hidden_note() -> str:
    """' (Your code printed N more lines while the check ran; they are not shown.)', once, or ''."""
    guard = _active()
    if guard is None or not (guard.hidden_lines or guard.hidden_partial):
        return ""
    hidden, guard.hidden_lines, guard.hidden_partial = guard.hidden_lines + guard.hidden_partial, 0, False
    return say(" (Your code printed {n} more lines while the check ran; they are not shown.)",
               "（检查运行期间，你的代码还打印了 {n} 行，没有显示。）", n=f"{hidden:,}")


def timed_out_message() -> str | None:
    """The verdict once the running check's time has run out (whatever the check would say after the
    stop is a consequence of it), else None."""
    guard = _active()
    if guard is None or not guard.expired:
        return None
    at = say(" It was at {where}.", "当时它停在{where}。", where=guard.where) if guard.where else ""
    return say("Your code did not finish within {s:g} s, so the check stopped it.{at} Does a loop never end, or does "
               "it wait for something that never comes (a lock, a sleep, a reply)?",
               "你的代码在 {s:g} 秒内没有结束，检查把它停下了。{at}是不是有循环永远不会结束，或者在等一个永远不会"
               "到来的东西（锁、sleep、回复）？", s=guard.seconds, at=at)


def mark_reported() -> None:
    """Called by passed()/failed(): the running check has given its verdict."""
    guard = _active()
    if guard is not None:
        guard.reported = True


class _Bounded(io.TextIOBase):
    """A stream that passes on the first lines written to it and counts the rest."""

    def __init__(self, guard: _Guard, inner: TextIO) -> None:
        self.guard, self.inner = guard, inner

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", None) or "utf-8"

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        guard = self.guard
        if not isinstance(text, str):
            text = str(text)
        shown = []
        for piece in text.splitlines(keepends=True):
            ends = piece != piece.rstrip("\r\n")
            if guard.shown_lines < SHOWN_LINES and guard.shown_characters < SHOWN_CHARACTERS:
                piece = piece[: SHOWN_CHARACTERS - guard.shown_characters]
                shown.append(piece)
                guard.shown_characters += len(piece)
                guard.shown_lines += ends
            elif ends:
                guard.hidden_lines, guard.hidden_partial = guard.hidden_lines + 1, False
            else:
                guard.hidden_partial = True
        if shown:
            self.inner.write("".join(shown))
        return len(text)

    def flush(self) -> None:
        try:
            self.inner.flush()
        except Exception:  # noqa: BLE001 — a closed stream must not break the check
            pass


@contextmanager
def _bounded_output(guard: _Guard) -> Iterator[None]:
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Bounded(guard, out), _Bounded(guard, err)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def _raise_in(thread_id: int) -> None:
    """Raise CheckTimeout in another thread at its next bytecode (CPython only)."""
    try:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(CheckTimeout))
    except Exception:  # noqa: BLE001 — not CPython: the limit then holds only where a signal reaches
        pass


def _stop_other_learner_threads(own: int, before: set[int]) -> str:
    """Raise CheckTimeout in every thread started during the check (not in `before`) that is running
    the learner's code now; the line one of them was at."""
    where = ""
    for thread_id, frame in sys._current_frames().items():  # the one way to see another thread's stack
        if thread_id != own and thread_id not in before and _runs_learner_code(frame):
            where = where or _learner_line(frame)
            _raise_in(thread_id)
    return where


def _line_stopper(guard: _Guard) -> Callable[..., Any]:
    """A trace function that raises CheckTimeout on every line of the learner's code: the way out of
    a loop that catches every exception (`except BaseException: pass` runs a line, and an exception
    raised in a handler is not caught by its own `try`)."""

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        if guard.disarmed or frame is guard.boundary or not is_learner_code(frame.f_code.co_filename):
            return None if event == "call" else trace
        if event == "line":
            raise CheckTimeout
        return trace

    return trace


@contextmanager
def _time_limit(guard: _Guard, seconds: float) -> Iterator[None]:
    own = threading.get_ident()
    before = {thread.ident for thread in threading.enumerate() if thread.ident is not None}
    stopper = _line_stopper(guard)
    previous_trace = sys.gettrace()

    def expire(frame: FrameType | None) -> bool:
        """True when CheckTimeout must be raised in the check's own thread now."""
        if guard.disarmed:
            return False
        first, guard.expired = not guard.expired, True
        elsewhere = _stop_other_learner_threads(own, before)
        if first:
            guard.where = _learner_line(frame, guard.boundary) or elsewhere
        return first or _runs_learner_code(frame, guard.boundary)

    use_signal = (threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
                  and signal.getitimer(signal.ITIMER_REAL)[0] == 0)  # fmt: skip
    if use_signal:

        def on_alarm(signum: int, frame: FrameType | None) -> None:
            if expire(frame):
                if _runs_learner_code(frame, guard.boundary):  # from now on, every line of it raises too
                    sys.settrace(stopper)
                    for f in _frames(frame, guard.boundary):
                        if is_learner_code(f.f_code.co_filename):
                            f.f_trace, f.f_trace_lines = stopper, True
                raise CheckTimeout

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_SECONDS)
        try:
            yield
        finally:
            guard.disarmed = True
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            if guard.expired:
                sys.settrace(previous_trace)
        return

    done = threading.Event()

    def quiet(frame: FrameType, event: str, arg: Any) -> Any:
        return None  # tracing on in this thread (so a frame's f_trace can be set from the watchdog), no cost per line

    def watch() -> None:
        wait = seconds
        while not done.wait(wait):
            wait = REPEAT_SECONDS
            frame = sys._current_frames().get(own)
            if expire(frame):
                if _runs_learner_code(frame, guard.boundary):
                    for f in _frames(frame, guard.boundary):  # every line of the learner's code raises too
                        if is_learner_code(f.f_code.co_filename):
                            f.f_trace, f.f_trace_lines = stopper, True
                _raise_in(own)

    sys.settrace(quiet)
    watchdog = threading.Thread(target=watch, name="course-check-watchdog", daemon=True)
    watchdog.start()
    try:
        yield
    finally:
        guard.disarmed = True
        done.set()
        watchdog.join()
        sys.settrace(previous_trace)


def _strict() -> bool:
    return os.environ.get("COURSE_CHECKS_STRICT", "") not in ("", "0")


def guarded(check: F, *, seconds: float | None = None) -> F:
    """`check` under the guard (see the module docstring); `seconds` overrides `LIMIT_SECONDS`."""
    from course_lib.exercises import failed

    @functools.wraps(check)
    def run_guarded(*args: Any, **kwargs: Any) -> Any:
        if _active() is not None:  # a check inside a check: the outer guard holds
            return check(*args, **kwargs)
        caller = sys._getframe(1)  # the cell (or test) that called the check
        guard = _Guard(check, caller.f_globals, sys.stdout)
        guard.seconds = LIMIT_SECONDS if seconds is None else seconds
        guard.boundary = sys._getframe(0)
        _state.guard = guard
        try:
            try:
                with _bounded_output(guard), _time_limit(guard, guard.seconds):
                    return check(*args, **kwargs)
            except CheckTimeout:
                if guard.reported:  # the time ran out just as the verdict was given
                    return False
                return failed("")  # failed() words it: timed_out_message()
            except RecursionError as error:
                if _strict() and not _runs_learner_code_tb(error.__traceback__):
                    raise
                return failed(say("Your code recursed without end (RecursionError).",
                                  "你的代码无休止地递归了（RecursionError）。"))
            except Exception as error:
                if guard.expired and not guard.reported:  # a consequence of the stop, not a fault
                    return failed("")
                if _strict() or guard.reported:
                    raise
                return failed(say("The check itself failed ({error}), not because of your answer as far as it "
                                  "can tell: run the cell again, and if it fails the same way, tell the course's "
                                  "authors.",
                                  "检查本身出了错（{error}），就它所知并不是你的答案造成的：请再运行一次这个单元格；"
                                  "如果还是同样失败，请告诉课程作者。", error=_named(error)))
        finally:
            _state.guard = None

    run_guarded.__signature__ = inspect.signature(check)  # type: ignore[attr-defined]
    return run_guarded  # type: ignore[return-value]


def _runs_learner_code_tb(tb: TracebackType | None) -> bool:
    return any(is_learner_code(entry.filename) for entry in traceback.extract_tb(tb))


def _named(error: BaseException) -> str:
    from course_lib.exercises.answers import raised

    return raised(error)


def guard_checks(namespace: dict[str, Any]) -> None:
    """Put every `check_…` function defined in the module `namespace` under the guard."""
    module = namespace["__name__"]
    for name, value in list(namespace.items()):
        if (name.startswith("check_") and inspect.isfunction(value) and value.__module__ == module
                and not hasattr(value, "__wrapped__")):  # fmt: skip
            namespace[name] = guarded(value)
