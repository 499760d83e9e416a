"""One exported release tree per test session (`git archive` of tests.fixtures.upgrade.RELEASE_COMMIT)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.upgrade import export_release


@pytest.fixture(scope="session")
def release_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_release(tmp_path_factory.mktemp("release"))
