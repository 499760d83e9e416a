"""The broker's public wire-format package: what the broker, the control plane and the Spark source share.

Record batch codec (`records/`), kio schema lookups (`schemas`), the frames a Kafka client sends and
receives (`frames`), cluster certificate issuing (`certificates`) and the allocator tuning for processes
that churn fetch-sized buffers (`allocator`). It imports nothing else of the broker and no Django, so the
control plane and code running in Spark executors can import it; the import contracts in pyproject.toml
(`[tool.importlinter]`, run by `make test`) hold it to that.
"""
