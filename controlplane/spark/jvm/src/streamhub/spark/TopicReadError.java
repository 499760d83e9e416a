package streamhub.spark;

/**
 * A read that cannot go ahead: refused, unreachable, out of range, or data that cannot be decoded. Named as the
 * Python source's error (planning.py), so the job launcher picks its line out of a failed run's log the same way.
 */
final class TopicReadError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TopicReadError(String message) {
        super(message);
    }
}
