"""The Kafka API handlers, one module per API family.

`broker.handlers.api_table.API_TABLE` maps each served api key to its versions and its handler (a module
path and a function name, imported on the API's first request); the dispatcher serves that table and
ApiVersions advertises it. A handler is a coroutine function; it receives the RequestContext and
the decoded kio request entity and returns the response body as a dict tree keyed by kio's field names
(a nested value may be a kio entity of the exact class), or None when no response must be sent
(Produce with acks=0). `broker.protocol.responses` checks the tree against the version's schema: a
field no version has, a value of the wrong type or a required field left out raises
ResponseShapeError (fields of other versions are dropped). Hot paths may instead return a
``broker.protocol.frames.FramedResponse`` they encoded themselves (Fetch does).
"""
