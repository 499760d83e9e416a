"""Cached lookups of kio's request/response classes, readers and writers."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from kio.index import UnknownAPIKey, UnknownEntity, load_request_schema, load_response_schema
from kio.serial import entity_reader, entity_writer
from kio.static.protocol import Entity

from broker.wire.legacy_schemas import LEGACY_REQUESTS, LEGACY_RESPONSES


class UnknownApi(LookupError):
    """kio has no schema for this api key/version."""


@functools.cache
def request_class(api_key: int, api_version: int) -> type[Entity]:
    try:
        return load_request_schema(api_key, api_version)
    except (UnknownAPIKey, UnknownEntity):
        if (api_key, api_version) in LEGACY_REQUESTS:
            return LEGACY_REQUESTS[api_key, api_version]  # type: ignore[return-value]
        raise UnknownApi(f"api {api_key} v{api_version}") from None


@functools.cache
def response_class(api_key: int, api_version: int) -> type[Entity]:
    try:
        return load_response_schema(api_key, api_version)
    except (UnknownAPIKey, UnknownEntity):
        if (api_key, api_version) in LEGACY_RESPONSES:
            return LEGACY_RESPONSES[api_key, api_version]  # type: ignore[return-value]
        raise UnknownApi(f"api {api_key} v{api_version}") from None


@functools.cache
def request_reader(api_key: int, api_version: int) -> Callable[[Any, int], tuple[Any, int]]:
    return entity_reader(request_class(api_key, api_version))


@functools.cache
def response_writer(api_key: int, api_version: int) -> Callable[[Any, Any], None]:
    return entity_writer(response_class(api_key, api_version))


@functools.cache
def request_is_flexible(api_key: int, api_version: int) -> bool:
    return bool(request_class(api_key, api_version).__flexible__)


def response_header_is_flexible(api_key: int, api_version: int) -> bool:
    # ApiVersions always answers with response header v0 so that a client that does not
    # yet know the broker's versions can parse it (KIP-511).
    if api_key == 18:
        return False
    return bool(response_class(api_key, api_version).__flexible__)
