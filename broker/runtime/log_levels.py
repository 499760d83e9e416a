"""The broker's logger levels as Kafka's BROKER_LOGGER config resource shows and changes them.

Kafka names log4j levels; Python's logging has no TRACE and calls FATAL CRITICAL: TRACE maps to a level
below DEBUG, FATAL to CRITICAL. The loggers are the broker's own (`broker` and below) and `root`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

ROOT = "root"
TRACE = 5
_TO_PYTHON = {
    "TRACE": TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
}
_TO_KAFKA = {level: name for name, level in _TO_PYTHON.items()}


def _kafka_level(level: int) -> str:
    """The nearest Kafka level at or above a Python level (a custom level shows as the next one up)."""
    for python_level in sorted(_TO_KAFKA):
        if level <= python_level:
            return _TO_KAFKA[python_level]
    return "FATAL"


def _loggers() -> dict[str, logging.Logger]:
    found = {ROOT: logging.getLogger()}
    for name, logger in logging.root.manager.loggerDict.items():
        if isinstance(logger, logging.Logger) and (name == "broker" or name.startswith("broker.")):
            found[name] = logger
    return found


def broker_log_levels() -> dict[str, str]:
    """Every broker logger and the level it logs at (its own or inherited), by name."""
    return {name: _kafka_level(logger.getEffectiveLevel()) for name, logger in sorted(_loggers().items())}


def check_log_levels(levels: Mapping[str, str | None]) -> None:
    """ValueError, worded as Kafka's, for an unknown logger, an unknown level, or unsetting root's."""
    known = _loggers()
    for name, level in levels.items():
        if name not in known:
            raise ValueError(f"Logger {name} does not exist!")
        if level is None and name == ROOT:
            raise ValueError(f"Removing the log level of the {ROOT} logger is not allowed")
        if level is not None and level.upper() not in _TO_PYTHON:
            raise ValueError(
                f"Cannot set the log level of {name} to {level} as it is not a supported log level. "
                f"Valid log levels are {', '.join(_TO_PYTHON)}"
            )


def set_log_levels(levels: Mapping[str, str | None]) -> None:
    """Set (or, with None, unset: inherit from the parent again) each logger's level; checked first."""
    check_log_levels(levels)
    known = _loggers()
    for name, level in levels.items():
        known[name].setLevel(logging.NOTSET if level is None else _TO_PYTHON[level.upper()])
