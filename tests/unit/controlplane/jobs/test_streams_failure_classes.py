"""Which driver failures stop a stream at once (a restart would meet them again) and which are retried."""

import pytest

from controlplane.jobs.streams import is_deterministic_failure

PERMANENT = [
    "ParseException: [PARSE_SYNTAX_ERROR] Syntax error at or near 'SELEC'. SQLSTATE: 42601 (line 1, pos 0)",
    "AnalysisException: [UNRESOLVED_COLUMN.WITH_SUGGESTION] A column ... `nope` cannot be resolved.",
    "InvalidOptions: the schema names column 'amount', which the topics source does not have",
    "TopicReadError: unknown topic(s): payments.gone",
    "TopicReadError: unknown target topic payments.out",
    "ProduceFailed: 1 records failed: Broker: Topic authorization failed",
    "ProduceFailed: starting transactions as streamhub-stream-4: Broker: Transactional Id authorization failed",
    "TopicReadError: cannot read the cluster's metadata: Local: Broker transport failure (SASL authentication "
    "error: Authentication failed during authentication due to invalid credentials)",
]
TRANSIENT = [
    "TopicReadError: cannot read the cluster's metadata: Failed to get metadata: Local: Broker transport failure "
    "(127.0.0.1:9/bootstrap: Connect to ipv4#127.0.0.1:9 failed: Connection refused)",
    "SparkException: Job aborted due to stage failure: Task 0 in stage 3.0 failed 4 times: ExecutorLostFailure "
    "(executor 1 exited caused by one of the running tasks) Reason: Remote RPC client disassociated",
    "AnalysisException: [PYTHON_DATA_SOURCE_ERROR] Failed to plan Python data source `topics`",
    "TopicReadError: no records from orders-0 within 120000 ms while reading [0, 10)",
    "spark-submit exited with status 137",
]


@pytest.mark.parametrize("reason", PERMANENT)
def test_a_failure_a_restart_would_meet_again_is_permanent(reason: str) -> None:
    assert is_deterministic_failure(reason)


@pytest.mark.parametrize("reason", TRANSIENT)
def test_an_unreachable_broker_or_a_lost_executor_is_retried(reason: str) -> None:
    assert not is_deterministic_failure(reason)
