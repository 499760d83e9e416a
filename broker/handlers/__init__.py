"""The Kafka API handlers, one module per API family.

Every handler module defines ``APIS: dict[int, tuple[int, int, Handler]]`` mapping an api key to
(min version, max version, handler); `broker.handlers.api_table` lists the modules and builds the
table the dispatcher serves and ApiVersions advertises. A handler receives the RequestContext and
the decoded kio request entity and returns its answer as a kio response entity, built for the newest
version it serves (`broker.protocol.responses.build_response` rebuilds it for the version asked), or None
when no response must be sent (Produce with acks=0). Fetch and Metadata return a
``broker.protocol.frames.FramedResponse`` they encoded themselves (measured reasons:
tests/unit/broker/handlers/test_api_table_typed_answers.py's HAND_FRAMED).
"""
