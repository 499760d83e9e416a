"""Debian's kcat (librdkafka 2.0.2) compresses only when the broker advertises Produce v0."""

import subprocess

import pytest

from broker.wire.records.batch import iter_batches
from broker.wire.records.codecs import Codec
from broker.wire.records.records import decode_records
from tests.integration.broker.helpers import create_topic

pytestmark = pytest.mark.integration

MESSAGES = [f"order-{i:04d} " + "status=shipped warehouse=north " * 4 for i in range(300)]


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4])
def test_kcat_produces_compressed_batches_and_they_are_stored_so(broker, topic_name, kcat, codec):
    create_topic(broker.bootstrap, topic_name)
    subprocess.run(
        [kcat, "-P", "-b", broker.bootstrap, "-t", topic_name, "-p", "0", "-z", codec.name.lower(),
         "-X", "linger.ms=200"],
        input="\n".join(MESSAGES).encode(),
        check=True,
        timeout=60,
    )  # fmt: skip
    segments = sorted((broker.log_dir / f"{topic_name}-0").glob("*.log"))
    batches = [batch for segment in segments for batch in iter_batches(segment.read_bytes())]
    assert batches
    assert {batch.codec for batch in batches} == {codec}
    stored = [record.value.decode() for batch in batches for record in decode_records(batch)]
    assert stored == MESSAGES

    consumed = subprocess.run(
        [kcat, "-C", "-b", broker.bootstrap, "-t", topic_name, "-p", "0", "-o", "beginning", "-e", "-q"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert consumed.stdout.decode().splitlines() == MESSAGES
