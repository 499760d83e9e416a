"""The Kafka API handlers, one module per API family.

Every handler module defines ``APIS: dict[int, tuple[int, int, Handler]]`` mapping an api key to
(min version, max version, handler); `broker.handlers.api_table` lists the modules and builds the
table the dispatcher serves and ApiVersions advertises. A handler receives the RequestContext and
the decoded kio request entity and returns the response body as a plain dict, or None when no
response must be sent (Produce with acks=0). Hot paths may instead return a
``broker.protocol.frames.FramedResponse`` they encoded themselves (Fetch does).
"""
