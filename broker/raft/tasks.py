"""Stopping background tasks without letting one stuck task hold up shutdown."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any


async def cancel_tasks(tasks: Sequence[asyncio.Task[Any]], timeout_s: float = 5.0) -> None:
    """Cancel and wait, bounded: Python 3.11's wait_for can swallow a cancellation that races a
    result, so the loops also check a closing flag, and a task that still runs is abandoned."""
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=timeout_s)
