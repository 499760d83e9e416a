"""Load kio, our Kafka protocol library, without Hypothesis in a broker process.

kio's phantom types (`kio.static._phantom`) import `hypothesis.strategies` whenever Hypothesis is
installed, to register a strategy for each of its primitive types; the image installs Hypothesis with
the rest of requirements.lock. A broker never draws examples, yet paid that import at every start
(about 175 ms of CPU). With `hypothesis` hidden from the import system while kio's primitive types are
defined, kio takes its "not installed" branch.

Only `python -m broker` does this (see broker/__main__.py): a process that imports the broker's modules
to test them, and then draws kio entities with `st.from_type`, needs kio's strategies registered.
"""

from __future__ import annotations

import importlib
import sys

# The kio module whose import defines the phantom types (and, with Hypothesis visible, registers them).
KIO_PRIMITIVES = "kio.static.primitive"


def import_kio_without_hypothesis() -> None:
    """Import kio's primitive types with Hypothesis hidden, unless kio or Hypothesis is loaded already
    (then hiding it would change nothing, or take strategies from a process that has them)."""
    if KIO_PRIMITIVES in sys.modules or "hypothesis" in sys.modules:
        return
    # A None entry makes `import hypothesis...` raise ImportError, which kio expects when not installed.
    sys.modules["hypothesis"] = None  # type: ignore[assignment]
    try:
        importlib.import_module(KIO_PRIMITIVES)
    finally:
        # A later `import hypothesis` (none in a broker) finds the real package again.
        del sys.modules["hypothesis"]
