package streamhub.spark;

/** Options the topics source cannot read with; named as the Python source's error (options.py). */
final class InvalidOptions extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    InvalidOptions(String message) {
        super(message);
    }
}
