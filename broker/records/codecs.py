"""Compression codecs of record batch v2 (attribute bits 0-2), all through cramjam."""

import enum
import struct

import cramjam

from broker.records.errors import CorruptRecordError, UnsupportedCompressionError


class Codec(enum.IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


# Topic `compression.type` values; "producer" means "keep whatever the producer sent".
CODEC_BY_TOPIC_NAME: dict[str, Codec] = {
    "uncompressed": Codec.NONE,
    "gzip": Codec.GZIP,
    "snappy": Codec.SNAPPY,
    "lz4": Codec.LZ4,
    "zstd": Codec.ZSTD,
}

# Java's snappy-java stream format, which old clients and librdkafka may produce.
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER_SIZE = 16
_CHUNK_LENGTH = struct.Struct(">i")


def codec_from_attributes(attributes: int) -> Codec:
    try:
        return Codec(attributes & 0x07)
    except ValueError:
        raise UnsupportedCompressionError(f"unknown compression codec {attributes & 0x07}") from None


def compress(codec: Codec, data: bytes | bytearray | memoryview) -> bytes:
    match codec:
        case Codec.NONE:
            return bytes(data)
        case Codec.GZIP:
            return bytes(cramjam.gzip.compress(data))
        case Codec.SNAPPY:
            # librdkafka, the Java client and kafka-python all read raw snappy.
            return bytes(cramjam.snappy.compress_raw(data))
        case Codec.LZ4:
            return bytes(cramjam.lz4.compress(data))
        case Codec.ZSTD:
            return bytes(cramjam.zstd.compress(data))
    raise UnsupportedCompressionError(f"unknown compression codec {codec}")


def decompress(codec: Codec, data: bytes | bytearray | memoryview) -> bytes:
    try:
        match codec:
            case Codec.NONE:
                return bytes(data)
            case Codec.GZIP:
                return bytes(cramjam.gzip.decompress(data))
            case Codec.SNAPPY:
                if bytes(data[: len(_XERIAL_MAGIC)]) == _XERIAL_MAGIC:
                    return _decompress_xerial(memoryview(data))
                return bytes(cramjam.snappy.decompress_raw(data))
            case Codec.LZ4:
                return bytes(cramjam.lz4.decompress(data))
            case Codec.ZSTD:
                return bytes(cramjam.zstd.decompress(data))
    except cramjam.DecompressionError as exc:
        raise CorruptRecordError(f"cannot decompress {codec.name} data: {exc}") from None
    raise UnsupportedCompressionError(f"unknown compression codec {codec}")


def _decompress_xerial(data: memoryview) -> bytes:
    """Header (magic, version, compatible version) then chunks of [int32 length][raw snappy block]."""
    out = bytearray()
    position = _XERIAL_HEADER_SIZE
    while position < len(data):
        if position + 4 > len(data):
            raise CorruptRecordError("truncated xerial snappy chunk header")
        (length,) = _CHUNK_LENGTH.unpack_from(data, position)
        position += 4
        if length < 0 or position + length > len(data):
            raise CorruptRecordError("truncated xerial snappy chunk")
        out += cramjam.snappy.decompress_raw(data[position : position + length])
        position += length
    return bytes(out)
