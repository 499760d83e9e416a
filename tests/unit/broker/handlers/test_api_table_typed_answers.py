"""Every handler of the dispatch table declares that it answers with a kio response entity (or nothing),
not a dict tree: the return annotation is what a type checker holds the handler's body to, and
import-linter cannot see return types. Only the APIs named in `HAND_FRAMED` answer bytes they framed
themselves, each for a measured reason."""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from typing import Any

from kio.schema.describe_producers.v0.response import DescribeProducersResponse
from kio.static.constants import EntityType

from broker.handlers.api_table import API_TABLE, every_handler
from broker.protocol.frames import FramedResponse

# APIs whose handlers frame their answers by hand, and why. CPU µs per partition of a 100-partition answer,
# hand-framed vs kio entities encoded by kio (bench/hand_framed_answers.py; README's protocol/ entry).
HAND_FRAMED = {
    1: "Fetch v17: 1.7 vs 8.8 µs per partition; record buffers go to the transport uncopied",
    3: "Metadata v12: 2.5 vs 8.6 µs per partition not cached; cached entries are spliced in as bytes",
}


def _answer_types(handler: Any) -> tuple[Any, ...]:
    returned = typing.get_type_hints(handler)["return"]
    if typing.get_origin(returned) in (types.UnionType, typing.Union):
        return typing.get_args(returned)
    return (returned,)


def _entity(answer: Any) -> bool:
    if answer is type(None):
        return True
    return (
        inspect.isclass(answer)
        and dataclasses.is_dataclass(answer)
        and getattr(answer, "__type__", None) is EntityType.response
    )


def untyped_answers() -> list[str]:
    """Handlers answering anything but kio response entities (or None), other than the hand-framed ones,
    and hand-framed ones answering anything but framed bytes."""
    wrong = []
    for key, (_, _, handler) in every_handler().items():
        answers = _answer_types(handler)
        if key in HAND_FRAMED:
            typed = answers == (FramedResponse,)
        else:
            typed = all(_entity(answer) for answer in answers)
        if not typed:
            wrong.append(f"{key} {handler.__module__}.{handler.__qualname__} -> {answers}")
    return sorted(wrong)


def test_every_handler_answers_kio_entities_except_the_hand_framed_ones():
    assert untyped_answers() == []


def test_the_hand_framed_apis_are_served():
    assert HAND_FRAMED.keys() <= API_TABLE.keys()


def test_an_entity_answer_is_recognised_and_a_dict_or_framed_one_is_not():
    async def typed(ctx: Any, request: Any) -> DescribeProducersResponse | None: ...

    async def untyped(ctx: Any, request: Any) -> dict[str, Any] | DescribeProducersResponse: ...

    async def framed(ctx: Any, request: Any) -> FramedResponse: ...

    assert all(_entity(answer) for answer in _answer_types(typed))
    assert not all(_entity(answer) for answer in _answer_types(untyped))
    assert not all(_entity(answer) for answer in _answer_types(framed))
