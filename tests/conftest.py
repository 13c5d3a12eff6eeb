"""Run `@pytest.mark.anyio` tests on asyncio only (the anyio pytest plugin's backend switch)."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
