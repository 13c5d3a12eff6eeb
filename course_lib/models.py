"""The model names the course sends: the defaults, and the variables that override them.

- `COURSE_MODEL` overrides the OpenAI model name (default `gpt-4.1`);
- `COURSE_ANTHROPIC_MODEL` the Anthropic one (default `claude-sonnet-4-6`).

This is the one place they live. It stands below everything that names a model: `backend` (which
re-exports them) and the offline model (whose `/v1/models` lists the name the course sends).
"""

from __future__ import annotations

import os

DEFAULT_MODEL = "gpt-4.1"
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6"


def model_name() -> str:
    """The model every request names: env `COURSE_MODEL`, else `DEFAULT_MODEL`."""
    return os.environ.get("COURSE_MODEL") or DEFAULT_MODEL


def anthropic_model_name() -> str:
    """The model Anthropic Messages requests name: env `COURSE_ANTHROPIC_MODEL`, else the default."""
    return os.environ.get("COURSE_ANTHROPIC_MODEL") or DEFAULT_ANTHROPIC_MODEL
