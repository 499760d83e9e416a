import struct

import cramjam
import pytest

from broker.wire.records.codecs import CODEC_BY_TOPIC_NAME, Codec, compress, decompress
from broker.wire.records.errors import CorruptRecordError

DATA = b"The quick brown fox jumps over the lazy dog. " * 200


@pytest.mark.parametrize("codec", list(Codec))
def test_every_codec_round_trips(codec: Codec) -> None:
    assert decompress(codec, compress(codec, DATA)) == DATA


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_compression_actually_shrinks_repetitive_data(codec: Codec) -> None:
    assert len(compress(codec, DATA)) < len(DATA) // 4


def test_snappy_is_written_raw() -> None:
    assert bytes(cramjam.snappy.decompress_raw(compress(Codec.SNAPPY, DATA))) == DATA


def test_it_reads_xerial_framed_snappy() -> None:
    chunks = [DATA[:1000], DATA[1000:5000], DATA[5000:]]
    framed = bytearray(b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1))
    for chunk in chunks:
        block = bytes(cramjam.snappy.compress_raw(chunk))
        framed += struct.pack(">i", len(block)) + block
    assert decompress(Codec.SNAPPY, bytes(framed)) == DATA


def test_a_truncated_xerial_chunk_is_corrupt() -> None:
    block = bytes(cramjam.snappy.compress_raw(DATA))
    framed = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + struct.pack(">i", len(block)) + block[:-5]
    with pytest.raises(CorruptRecordError):
        decompress(Codec.SNAPPY, framed)


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_garbage_is_a_corrupt_record_error(codec: Codec) -> None:
    with pytest.raises(CorruptRecordError):
        decompress(codec, b"\x01\x02 definitely not compressed \xff" * 3)


def test_topic_compression_names_map_to_codecs() -> None:
    assert CODEC_BY_TOPIC_NAME["uncompressed"] == Codec.NONE
    assert CODEC_BY_TOPIC_NAME["zstd"] == Codec.ZSTD
    assert "producer" not in CODEC_BY_TOPIC_NAME


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_data_that_decompresses_past_the_limit_is_corrupt_not_allocated(codec):
    bomb = compress(codec, b"\0" * 5_000_000)  # zstd: a few hundred bytes
    assert decompress(codec, bomb) == b"\0" * 5_000_000  # under the default limit
    with pytest.raises(CorruptRecordError, match="decompresses to more than 1000000 bytes"):
        decompress(codec, bomb, limit=1_000_000)


def test_xerial_snappy_chunks_count_against_one_limit():
    chunk = bytes(cramjam.snappy.compress_raw(b"\0" * 600_000))
    framed = b"\x82SNAPPY\x00" + b"\0" * 8 + (struct.pack(">i", len(chunk)) + chunk) * 2
    assert len(decompress(Codec.SNAPPY, framed)) == 1_200_000
    with pytest.raises(CorruptRecordError, match="more than"):
        decompress(Codec.SNAPPY, framed, limit=1_000_000)
