"""Transactions: the transaction coordinator and the `__transaction_state` topic."""

from broker.transactions.coordinator import (
    InitProducerResult,
    TransactionCoordinator,
    TransactionCoordinatorConfig,
    TransactionDescription,
)
from broker.transactions.state import TxnState

__all__ = [
    "InitProducerResult",
    "TransactionCoordinator",
    "TransactionCoordinatorConfig",
    "TransactionDescription",
    "TxnState",
]
