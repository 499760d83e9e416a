"""A cluster node as a whole: runs the roles `process.roles` names and joins a broker to the quorum.

The top of the broker: it wires the controller (broker/controller/), the client-facing broker
(broker/server/) and the metadata image's consumers together; nothing below imports it.
"""
