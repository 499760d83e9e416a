"""Every handler of the dispatch table declares that it answers with a kio response entity (or hand-framed
bytes, or nothing), not a dict tree: the return annotation is what a type checker holds the handler's body
to, and import-linter cannot see return types. Handlers not converted yet are counted against a ceiling
that may only go down."""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from typing import Any

from kio.schema.describe_producers.v0.response import DescribeProducersResponse
from kio.static.constants import EntityType

from broker.handlers.api_table import every_handler
from broker.protocol.frames import FramedResponse

# Handlers that still answer with dict trees (converted one module at a time): lower it as they go.
DICT_ANSWERS_CEILING = 18


def _answer_types(handler: Any) -> tuple[Any, ...]:
    returned = typing.get_type_hints(handler)["return"]
    if typing.get_origin(returned) in (types.UnionType, typing.Union):
        return typing.get_args(returned)
    return (returned,)


def _typed(answer: Any) -> bool:
    if answer is type(None) or answer is FramedResponse:
        return True
    return (
        inspect.isclass(answer)
        and dataclasses.is_dataclass(answer)
        and getattr(answer, "__type__", None) is EntityType.response
    )


def dict_answering() -> list[str]:
    return sorted(
        f"{key} {handler.__module__}.{handler.__qualname__}"
        for key, (_, _, handler) in every_handler().items()
        if not all(_typed(answer) for answer in _answer_types(handler))
    )


def test_handlers_answering_dicts_only_get_fewer():
    remaining = dict_answering()
    assert len(remaining) <= DICT_ANSWERS_CEILING, "\n".join(remaining)


def test_a_typed_handler_is_recognised_and_a_dict_one_is_not():
    async def typed(ctx: Any, request: Any) -> DescribeProducersResponse: ...

    async def untyped(ctx: Any, request: Any) -> dict[str, Any] | DescribeProducersResponse: ...

    assert all(_typed(answer) for answer in _answer_types(typed))
    assert not all(_typed(answer) for answer in _answer_types(untyped))
