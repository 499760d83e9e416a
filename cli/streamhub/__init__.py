"""streamhub: the StreamHub command-line tool. It speaks only the REST API (no server code is imported)."""

__version__ = "0.1.0"
