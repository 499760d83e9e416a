"""The Kafka API handlers, one module per API family.

`broker.handlers.api_table.API_TABLE` maps each served api key to its versions and its handler (a module
path and a function name, imported on the API's first request); the dispatcher serves that table and
ApiVersions advertises it. A handler receives the RequestContext and
the decoded kio request entity and returns its answer as a kio response entity, built for the newest
version it serves (`broker.protocol.responses.build_response` rebuilds it for the version asked), or None
when no response must be sent (Produce with acks=0). Fetch and Metadata return a
``broker.protocol.frames.FramedResponse`` they encoded themselves (measured reasons:
tests/unit/broker/handlers/test_api_table_typed_answers.py's HAND_FRAMED).
"""
