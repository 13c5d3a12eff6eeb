"""Keep `import jsonschema` fast: rfc3987_syntax's grammars are built when an IRI is first checked.

Why: the MCP client checks every tool result against the tool's `outputSchema` with jsonschema,
so the first `tools/call` in a process imports it. jsonschema's `_format` module imports
`rfc3987_syntax` whenever it is installed (here it is: jupyter-events requires
`jsonschema[format-nongpl]`), and rfc3987-syntax 1.1.0 compiles its Lark grammars at import:
0.7-0.9 s on the 2-core machine, paid by the first tool call in every notebook (upstream:
python-jsonschema/jsonschema#1428; figures in benchmarks/README.md).

`defer_iri_grammars()` puts a stand-in module under the name `rfc3987_syntax` before jsonschema
looks for it. jsonschema imports `is_valid_syntax` from it; the stand-in's `is_valid_syntax`, and
any other attribute (PEP 562 `__getattr__`), imports the real package on first use and hands over
to it, and the real package then replaces the stand-in in `sys.modules`. Nothing is lost: IRI
formats are checked exactly as before, only later. It does nothing if rfc3987_syntax is not
installed or was imported already. `tests/test_fast_jsonschema.py` fails loudly if jsonschema
starts reaching rfc3987_syntax another way.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

NAME = "rfc3987_syntax"


def defer_iri_grammars() -> None:
    """Install the stand-in for `rfc3987_syntax`, unless it is loaded already or not installed."""
    if NAME in sys.modules or importlib.util.find_spec(NAME) is None:
        return
    stand_in = types.ModuleType(NAME, "Stand-in: the real rfc3987_syntax is imported on first use.")

    def load() -> types.ModuleType:
        if sys.modules.get(NAME) is stand_in:
            del sys.modules[NAME]  # so the import below runs the real package
        return importlib.import_module(NAME)

    def is_valid_syntax(*args: Any, **kwargs: Any) -> Any:
        return load().is_valid_syntax(*args, **kwargs)

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):  # the import system asks for __path__ and such: not a use
            raise AttributeError(name)
        return getattr(load(), name)

    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    stand_in.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[NAME] = stand_in
