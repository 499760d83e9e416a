"""Which transaction protocol a request follows (KIP-890 part 2).

Apart from transactions.py so that Produce, whose every request asks, does not import the transaction APIs'
handlers and their response schemas (about 22 ms of CPU at a broker's first Produce).
"""

from __future__ import annotations

from broker.context import RequestContext
from broker.metadata.features import TRANSACTION_VERSION

# The request versions a transaction.version 2 client sends (KIP-890 part 2): Produce v12 (implicit partition
# add), EndTxn v5 (epoch bump), TxnOffsetCommit v5 (implicit add of the group's offsets partition).
FIRST_TRANSACTION_V2_VERSION = {0: 12, 26: 5, 28: 5}


def transaction_v2(ctx: RequestContext) -> bool:
    """Whether this request follows transaction version 2: sent at a version that can, with transaction.version
    2 finalized. Otherwise it is served as the version before (Kafka's rule: the level decides)."""
    first = FIRST_TRANSACTION_V2_VERSION.get(ctx.api_key)
    return (
        first is not None and ctx.api_version >= first and ctx.broker.feature_level(TRANSACTION_VERSION) >= 2
    )
