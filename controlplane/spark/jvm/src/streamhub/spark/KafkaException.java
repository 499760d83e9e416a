package streamhub.spark;

/** A read that cannot go ahead: refused, unreachable, out of range, or data that cannot be decoded. */
final class KafkaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    KafkaException(String message) {
        super(message);
    }
}
