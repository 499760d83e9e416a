"""Compression codecs of record batch v2 (attribute bits 0-2), all through cramjam."""

import enum
import struct
import zlib

import cramjam

from broker.wire.records.errors import (
    CorruptRecordError,
    DecompressedTooLargeError,
    UnsupportedCompressionError,
)


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


def compress(codec: Codec, data: bytes | bytearray | memoryview, level: int | None = None) -> bytes:
    """`level` (gzip, lz4, zstd; None: the codec library's default) as a topic's compression.<codec>.level."""
    match codec:
        case Codec.NONE:
            return bytes(data)
        case Codec.GZIP:
            return bytes(
                cramjam.gzip.compress(data) if level is None else cramjam.gzip.compress(data, level=level)
            )
        case Codec.SNAPPY:
            # librdkafka, the Java client and kafka-python all read raw snappy.
            return bytes(cramjam.snappy.compress_raw(data))
        case Codec.LZ4:
            # Independent blocks: Kafka's LZ4 reader (its broker's, its Java clients') refuses linked ones,
            # which cramjam.lz4.compress writes.
            compressor = (
                cramjam.lz4.Compressor(block_linked=False)
                if level is None
                else cramjam.lz4.Compressor(level=level, block_linked=False)
            )
            compressor.compress(data if isinstance(data, bytes) else bytes(data))
            return bytes(compressor.finish())
        case Codec.ZSTD:
            return bytes(
                cramjam.zstd.compress(data) if level is None else cramjam.zstd.compress(data, level=level)
            )
    raise UnsupportedCompressionError(f"unknown compression codec {codec}")


# A batch's records section may not decompress to more than this. Compressed data can expand by a
# factor of a thousand (gzip) or far more (zstd): without a bound, one 1 MB batch on a compacted
# topic could make the broker allocate gigabytes. Kafka's own limit on a batch is 1 MB compressed.
MAX_DECOMPRESSED_BYTES = 128 * 1024 * 1024
# First guess at the decompressed size, as a multiple of the compressed size; grown by 4x as needed.
_FIRST_EXPANSION = 8
_MIN_OUTPUT = 64 * 1024
# cramjam's messages for an output buffer that is too small (as opposed to corrupt input).
_OUTPUT_TOO_SMALL = ("failed to write whole buffer", "is smaller than required")


def decompress(
    codec: Codec, data: bytes | bytearray | memoryview, limit: int = MAX_DECOMPRESSED_BYTES
) -> bytes:
    """Decompress into bounded buffers: more than `limit` bytes is a DecompressedTooLargeError (a
    CorruptRecordError)."""
    if codec == Codec.NONE:
        return bytes(data)
    if codec not in _DECOMPRESS_INTO:
        raise UnsupportedCompressionError(f"unknown compression codec {codec}")
    if codec == Codec.SNAPPY and bytes(data[: len(_XERIAL_MAGIC)]) == _XERIAL_MAGIC:
        return _decompress_xerial(memoryview(data), limit)
    if codec == Codec.GZIP:
        return _decompress_gzip(data, limit)
    return _decompress_bounded(codec, data, limit)


_GZIP_MAGIC = b"\x1f\x8b"


def _decompress_gzip(data: bytes | bytearray | memoryview, limit: int) -> bytes:
    """gzip members one after another, as Java's GZIPInputStream (Kafka's broker and Java consumers)
    reads them: bytes after a member that do not start another one are ignored, as there."""
    out = bytearray()
    rest = bytes(data)
    while True:
        inflater = zlib.decompressobj(wbits=31)
        try:
            out += inflater.decompress(rest, limit - len(out) + 1)
        except zlib.error as exc:
            raise CorruptRecordError(f"cannot decompress GZIP data: {exc}") from None
        if len(out) > limit:
            raise DecompressedTooLargeError(f"GZIP data decompresses to more than {limit} bytes")
        if not inflater.eof:
            raise CorruptRecordError("cannot decompress GZIP data: the stream is cut short")
        rest = inflater.unused_data
        if not rest.startswith(_GZIP_MAGIC):
            return bytes(out)


def _decompress_bounded(codec: Codec, data: bytes | bytearray | memoryview, limit: int) -> bytes:
    size = max(1, min(limit, max(_MIN_OUTPUT, _FIRST_EXPANSION * len(data))))
    while True:
        output = bytearray(size)
        try:
            written = _DECOMPRESS_INTO[codec](data, output)
        except cramjam.DecompressionError as exc:
            if not any(marker in str(exc) for marker in _OUTPUT_TOO_SMALL):
                raise CorruptRecordError(f"cannot decompress {codec.name} data: {exc}") from None
            if size >= limit:
                raise DecompressedTooLargeError(
                    f"{codec.name} data decompresses to more than {limit} bytes"
                ) from None
            size = min(limit, size * 4)
            continue
        return bytes(memoryview(output)[:written])


_DECOMPRESS_INTO = {
    Codec.GZIP: cramjam.gzip.decompress_into,
    Codec.SNAPPY: cramjam.snappy.decompress_raw_into,
    Codec.LZ4: cramjam.lz4.decompress_into,
    Codec.ZSTD: cramjam.zstd.decompress_into,
}


def _decompress_xerial(data: memoryview, limit: int) -> bytes:
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
        out += _decompress_bounded(Codec.SNAPPY, data[position : position + length], limit - len(out))
        position += length
    return bytes(out)
