"""The Kafka API handlers, one module per API family.

Every handler module defines ``APIS: dict[int, tuple[int, int, Handler]]`` mapping an api key to
(min version, max version, handler); `broker.handlers.api_table` lists the modules and builds the
table the dispatcher serves and ApiVersions advertises. A handler receives the RequestContext and
the decoded kio request entity and returns the response body as a dict tree keyed by kio's field names
(a nested value may be a kio entity of the exact class), or None when no response must be sent
(Produce with acks=0). `broker.protocol.responses` checks the tree against the version's schema: a
field no version has, a value of the wrong type or a required field left out raises
ResponseShapeError (fields of other versions are dropped). Hot paths may instead return a
``broker.protocol.frames.FramedResponse`` they encoded themselves (Fetch does).
"""
