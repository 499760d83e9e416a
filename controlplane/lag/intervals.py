"""The lag settings read from the environment (plain Python: settings.py and the beat schedule import it)."""

from __future__ import annotations

import os

SAMPLING_INTERVAL_BOUNDS = (5, 60)


class InvalidLagSetting(ValueError):
    pass


def sampling_interval_seconds(environ: dict[str, str] | None = None) -> int:
    """LAG_SAMPLING_INTERVAL_SECONDS, 15 by default; outside 5-60 the process refuses to start."""
    raw = (environ if environ is not None else os.environ).get("LAG_SAMPLING_INTERVAL_SECONDS", "15")
    try:
        seconds = int(raw)
    except ValueError:
        raise InvalidLagSetting(
            f"LAG_SAMPLING_INTERVAL_SECONDS must be a whole number, not {raw!r}"
        ) from None
    low, high = SAMPLING_INTERVAL_BOUNDS
    if not low <= seconds <= high:
        raise InvalidLagSetting(
            f"LAG_SAMPLING_INTERVAL_SECONDS must be between {low} and {high}, not {seconds}"
        )
    return seconds
