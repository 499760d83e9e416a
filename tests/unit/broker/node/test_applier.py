"""The applier on a real single node: what a topic deletion writes to disk before DeleteTopics is answered."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from broker.metadata.topic_registry import SNAPSHOT_NAME, MetadataStore
from tests.unit.broker.running_state import create_topic, start_node


def test_a_deletion_is_answered_after_one_fsync_of_the_metadata_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The metadata log makes the deletion durable; rewriting the broker's whole topic registry (file,
    then directory fsync) on the way to the answer made DeleteTopics twice as slow."""
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    async def delete_one() -> None:
        node = await start_node({"log.dirs": str(tmp_path)})
        try:
            await create_topic(node.state, "doomed", 2)
            monkeypatch.setattr(os, "fsync", recording_fsync)
            await node.state.topics.delete("doomed")
            monkeypatch.setattr(os, "fsync", real_fsync)
            assert node.state.metadata.get("doomed") is None
            assert node.state.logs.get("doomed", 0) is None
        finally:
            await node.close()

    asyncio.run(delete_one())
    assert any(Path(path).parent.name == "__cluster_metadata" for path in synced), synced
    # Only the registry's own files: a high-watermark checkpoint may be written in that window too.
    assert not [path for path in synced if Path(path).name.startswith("broker-metadata.")], synced
    # Closing the node wrote the deletion to the registry.
    reloaded = MetadataStore(tmp_path)
    reloaded.load()
    assert reloaded.get("doomed") is None
    assert "doomed" not in (tmp_path / SNAPSHOT_NAME).read_text()
