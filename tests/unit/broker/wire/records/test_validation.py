"""The record walk behind Produce's validation: what Kafka reads passes, what it does not is INVALID_RECORD,
and the vectorized check of large batches agrees with the one-record-at-a-time walk on every input."""

import random

import pytest

from broker.wire.records.batch import iter_batches, whole_batches_length
from broker.wire.records.errors import InvalidRecordError
from broker.wire.records.records import Record, build_batch
from broker.wire.records.validation import RecordsShape, _check_vectorized, _walk, check_records
from tests.fixtures.poison_batches import RECORD_FAULTS, accepted_oddities, poison_batches


def records_section(batch: bytes) -> tuple[bytes, int]:
    (view,) = iter_batches(batch)
    return view.records_payload().tobytes(), view.record_count


def random_records(rng: random.Random, count: int, most_headers: int = 4) -> list[Record]:
    def maybe_bytes(limit: int) -> bytes | None:
        return None if rng.random() < 0.2 else rng.randbytes(rng.choice((0, 1, 63, 64, limit)))

    return [
        Record(
            key=maybe_bytes(300),
            value=maybe_bytes(9000),
            headers=tuple((f"h{n}", maybe_bytes(70)) for n in range(rng.choice((0, 0, 1, 2, most_headers)))),
            timestamp=1_700_000_000_000 + rng.choice((0, 1, -70, 10**6, -(10**9))),
        )
        for _ in range(count)
    ]


def walk(data: bytes, count: int) -> RecordsShape | None:
    try:
        return _walk(data, 0, count, True)
    except (InvalidRecordError, IndexError):
        return None


def verdict(shape: RecordsShape | None) -> tuple[list[int], int, int] | None:
    """What both walks must agree on; the vectorized one also keeps every delta (an array) for later checks."""
    return None if shape is None else (shape.keyless, shape.min_timestamp_delta, shape.max_timestamp_delta)


@pytest.mark.parametrize("seed", range(6))
def test_both_walks_read_valid_batches_alike(seed: int) -> None:
    rng = random.Random(seed)
    records = random_records(rng, rng.choice((100, 150, 700)))
    data, count = records_section(build_batch(records))
    expected = [index for index, record in enumerate(records) if record.key is None]
    assert verdict(walk(data, count)) == verdict(_check_vectorized(data, 0, count, True))
    assert check_records(data, count, collect_keyless=True).keyless == expected


def test_records_with_many_headers_are_walked_one_at_a_time() -> None:
    records = random_records(random.Random(9), 120, most_headers=9)
    data, count = records_section(build_batch(records))
    assert _check_vectorized(data, 0, count, True) is None
    assert verdict(check_records(data, count, collect_keyless=True)) == verdict(walk(data, count))


def test_every_poison_batch_with_a_fault_in_its_records_fails_the_walk() -> None:
    cases = [case for case in poison_batches(with_bomb=False) if case.name in RECORD_FAULTS]
    assert len(cases) == len(RECORD_FAULTS)
    for case in cases:
        data, count = records_section(case.batch)
        with pytest.raises(InvalidRecordError):
            check_records(data, count)


def test_what_kafka_accepts_passes_the_walk() -> None:
    for batch in accepted_oddities().values():
        (view,) = iter_batches(batch[: whole_batches_length(batch)])
        if view.codec == 0:
            check_records(view.records_payload().tobytes(), view.record_count)


@pytest.mark.parametrize("seed", range(4))
def test_the_vectorized_check_never_accepts_what_the_walk_refuses(seed: int) -> None:
    """Random damage to large valid batches: same verdict, same shape."""
    rng = random.Random(seed)
    data, count = records_section(build_batch(random_records(rng, 120)))
    for _ in range(300):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            damaged[rng.randrange(len(damaged))] = rng.choice(
                (0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256))
            )
        if rng.random() < 0.2:
            del damaged[rng.randrange(len(damaged)) :]
        vectorized = _check_vectorized(bytes(damaged), 0, count, True)
        if vectorized is not None:
            assert verdict(vectorized) == verdict(walk(bytes(damaged), count))
