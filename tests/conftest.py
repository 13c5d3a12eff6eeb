"""Shared fixtures: the anyio backend, and the pinned Node programs."""

import os

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Run `@pytest.mark.anyio` tests on asyncio only."""
    return "asyncio"


@pytest.fixture(scope="session")
def node_tools():
    """The pinned Node programs (Inspector, reference server), installed if needed.

    Skips locally when Node.js is missing; in CI (`CI=true`) that is a failure instead.
    """
    from course_lib.node_tools import NodeToolsMissing, ensure_installed

    try:
        ensure_installed()
    except NodeToolsMissing as missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs Node.js and the pinned npm packages: {missing}")
        pytest.skip(f"{missing} (then `make node-tools`)")
