"""Typed failures of the Kafka gateway, each carrying the Kafka error name it came from."""


class KafkaGatewayError(Exception):
    """A Kafka call failed; `error_name` is Kafka's (or librdkafka's) name for the error."""

    def __init__(self, error_name: str, message: str) -> None:
        super().__init__(f"{error_name}: {message}")
        self.error_name = error_name
        self.message = message


class ClusterUnreachable(KafkaGatewayError):
    """No broker answered within the timeout (connection refused, timed out, name not resolved)."""


class AuthenticationFailed(KafkaGatewayError):
    """The cluster refused the control plane's credentials."""


class NotAuthorized(KafkaGatewayError):
    """The cluster's ACLs do not let the control plane do this."""
