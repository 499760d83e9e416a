"""One broker's process: listeners, connections, request dispatch, and assembling its services.

Above the handlers (it dispatches to them) and below `broker.node` (which joins it to its quorum).
"""
