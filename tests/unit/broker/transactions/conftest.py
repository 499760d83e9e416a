from __future__ import annotations

import asyncio
import inspect

import pytest

from broker.transactions.coordinator import TransactionCoordinator
from tests.fixtures.coordinators import lead_every_partition


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Runs `async def` tests in a fresh event loop (no pytest-asyncio in this project); a
    `coordinator` argument is started first and closed after the test, in that loop."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    coordinator = arguments.get("coordinator")

    async def run() -> None:
        if isinstance(coordinator, TransactionCoordinator):
            await lead_every_partition(coordinator)
            coordinator.start_sweeps()
        try:
            await pyfuncitem.obj(**arguments)
        finally:
            if isinstance(coordinator, TransactionCoordinator):
                await coordinator.close()

    asyncio.run(asyncio.wait_for(run(), timeout=10))
    return True
