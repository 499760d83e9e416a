"""The API table names every served API's handler by module and function; the dispatcher imports a handler
on its API's first request, and a broker starts without importing the handler modules (issue #33)."""

from __future__ import annotations

import importlib
import inspect
import io
import json
import logging
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.api_versions.v3.response import ApiVersionsResponse
from kio.schema.errors import ErrorCode
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.metadata.v12.response import MetadataResponse
from kio.schema.request_header.v2.header import RequestHeader
from kio.serial import entity_reader, entity_writer

from broker.handlers.api_table import API_TABLE, HandlerUnavailable, ServedApi, handler
from broker.protocol.fetch_encoding import MAX_VERSION as HAND_FRAMED_FETCH_MAX_VERSION
from broker.server.dispatcher import Peer, dispatch
from broker.wire.schemas import request_class
from tests.fixtures.import_contracts import REPO_ROOT
from tests.unit.broker.running_state import running_node

# The handler modules `import broker.__main__` imports: the package, the table, ApiVersions (the first
# request of every client) with the two it advertises from (features, telemetry's api keys), and
# txn_markers (the transaction coordinator writes markers through it). At the release (d32902d) all 31.
STARTUP_HANDLER_MODULES = 6
# kio.schema modules (packages included) `import broker.__main__` imports; 277 before the handlers were
# imported lazily. A ceiling: lower it when a startup import goes.
STARTUP_KIO_SCHEMA_MODULES = 79

PEER = Peer(host="127.0.0.1", port=1, listener_name="PLAINTEXT")
METADATA = 3
BROKEN_MODULE = "lazily_imported_metadata_handler"


@pytest.mark.parametrize("api_key", sorted(API_TABLE))
def test_every_entry_names_a_coroutine_function_the_dispatcher_can_call(api_key: int) -> None:
    entry = API_TABLE[api_key]
    found = getattr(importlib.import_module(entry.module), entry.function)
    assert inspect.iscoroutinefunction(found), f"{entry.module}.{entry.function} is not `async def`"
    inspect.signature(found).bind("ctx", "request")  # the dispatcher calls handler(ctx, request)
    assert handler(api_key) is found
    assert 0 <= entry.min_version <= entry.max_version
    for version in range(entry.min_version, entry.max_version + 1):
        assert request_class(api_key, version).__api_key__ == api_key


def test_fetch_is_served_up_to_the_newest_version_its_hand_framed_answer_encodes() -> None:
    assert API_TABLE[1].max_version == HAND_FRAMED_FETCH_MAX_VERSION


STARTUP_PROBE = """
import json, sys
import broker.__main__
def handler_modules():
    return sorted(name for name in sys.modules if name.startswith("broker.handlers"))
at_start = handler_modules()
kio_schema = sum(name.startswith("kio.schema.") for name in sys.modules)
deferred = sorted(name for name in ("numpy", "google.protobuf") if name in sys.modules)
from broker.handlers.api_versions import advertised_versions
advertised = advertised_versions(legacy=True)
print(json.dumps({"at_start": at_start, "kio_schema": kio_schema, "deferred": deferred, "advertised": len(advertised),
                  "after_advertising": handler_modules()}))
"""


def test_a_broker_starts_and_advertises_its_apis_without_their_handlers_numpy_or_protobuf() -> None:
    probe = subprocess.run(
        [sys.executable, "-c", STARTUP_PROBE],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    found = json.loads(probe.stdout)
    assert len(found["at_start"]) <= STARTUP_HANDLER_MODULES, found["at_start"]
    assert found["kio_schema"] <= STARTUP_KIO_SCHEMA_MODULES
    # Imported by the first produce batch of 100 records or more, and by the first client telemetry push.
    assert found["deferred"] == []
    assert found["advertised"] == len(API_TABLE)
    assert found["after_advertising"] == found["at_start"]


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    with running_node({"log.dirs": str(tmp_path_factory.mktemp("lazy-handlers"))}) as running:
        yield running


def frame(body: object, correlation_id: int) -> bytes:
    buffer = io.BytesIO()
    header = RequestHeader(
        request_api_key=body.__api_key__,
        request_api_version=body.__version__,
        correlation_id=correlation_id,
        client_id="lazy",
    )
    entity_writer(RequestHeader)(buffer, header)
    entity_writer(type(body))(buffer, body)
    return buffer.getvalue()


def answer(response_type: type, chunks: list[bytes] | None) -> object:
    assert chunks is not None
    data = b"".join(chunks)
    assert struct.unpack_from(">i", data)[0] == len(data) - 4
    # size, correlation id, then the body (v3+ ApiVersions keeps the v0 header; Metadata v12 is flexible)
    offset = 8 if response_type is ApiVersionsResponse else 9
    entity, _ = entity_reader(response_type)(data, offset)
    return entity


METADATA_REQUEST = MetadataRequest(
    topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
)
VERSIONS_REQUEST = ApiVersionsRequest(client_software_name="lazy", client_software_version="1")


@pytest.fixture
def module_file(tmp_path: Path, monkeypatch):
    """Where BROKEN_MODULE's source goes; importable, and forgotten after the test."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path / f"{BROKEN_MODULE}.py"
    sys.modules.pop(BROKEN_MODULE, None)


def test_a_handler_module_that_does_not_import_fails_its_requests_until_it_imports(
    node, module_file: Path, monkeypatch, caplog
) -> None:
    loop, state = node
    module_file.write_text('raise RuntimeError("this handler module is broken")\n')
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # the fixed file must be read again
    low, high, *_ = API_TABLE[METADATA]
    monkeypatch.setitem(API_TABLE, METADATA, ServedApi(low, high, BROKEN_MODULE, "handle"))

    with caplog.at_level(logging.ERROR, logger="broker.handlers.api_table"):
        for correlation_id in (1, 3):
            with pytest.raises(HandlerUnavailable, match="this handler module is broken"):
                loop.run_until_complete(dispatch(state, PEER, frame(METADATA_REQUEST, correlation_id)))
            # Other APIs are served meanwhile.
            versions = loop.run_until_complete(
                dispatch(state, PEER, frame(VERSIONS_REQUEST, correlation_id + 1))
            )
            assert answer(ApiVersionsResponse, versions).error_code is ErrorCode.none

    failures = [record for record in caplog.records if BROKEN_MODULE in record.getMessage()]
    assert len(failures) == 1, "logged once, not once per request"
    assert "this handler module is broken" in caplog.text  # with its traceback

    module_file.write_text("from broker.handlers.metadata import handle_metadata as handle\n")
    importlib.invalidate_caches()
    metadata = loop.run_until_complete(dispatch(state, PEER, frame(METADATA_REQUEST, 5)))
    assert [broker.node_id for broker in answer(MetadataResponse, metadata).brokers] == [state.node_id]
