"""add_connection_file: what the client sends a Spark Connect session, and what it leaves behind."""

import json
import stat
from pathlib import Path

from controlplane.spark.topic_source import add_connection_file

CONFIG = {"bootstrap.servers": "b:9092", "sasl.password": "s3cret", "log_level": 4}


class ArtifactRecorder:
    """Stands in for the Connect session's addArtifacts (the client's upload; the real one is exercised by
    tests/integration/spark/test_spark_connect.py): what the file was when it was sent."""

    def __init__(self) -> None:
        self.sent: list[dict] = []

    def addArtifacts(self, path: str, *, file: bool) -> None:
        sent = Path(path)
        self.sent.append(
            {
                "path": sent,
                "file": file,
                "mode": stat.S_IMODE(sent.stat().st_mode),
                "directory_mode": stat.S_IMODE(sent.parent.stat().st_mode),
                "content": json.loads(sent.read_text()),
            }
        )


def test_the_file_is_private_randomly_named_and_gone_once_sent():
    session = ArtifactRecorder()
    first, second = add_connection_file(session, CONFIG), add_connection_file(session, CONFIG)
    assert first != second
    assert first.startswith("streamhub-connection-")
    assert first.endswith(".json")
    sent = session.sent[0]
    assert sent["path"].name == first
    assert sent["file"] is True
    assert sent["mode"] == 0o600
    assert sent["directory_mode"] == 0o700
    assert sent["content"] == {"bootstrap.servers": "b:9092", "sasl.password": "s3cret", "log_level": "4"}
    assert not sent["path"].exists()
    assert not sent["path"].parent.exists()
