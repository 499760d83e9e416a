package streamhub.spark;

import java.util.Map;

/** Names of the Kafka error codes a Fetch or Metadata answer can carry, for messages. */
final class ErrorCodes {
    static final short OFFSET_OUT_OF_RANGE = 1;
    static final short UNKNOWN_TOPIC_OR_PARTITION = 3;
    static final short LEADER_NOT_AVAILABLE = 5;
    static final short NOT_LEADER_OR_FOLLOWER = 6;
    static final short FENCED_LEADER_EPOCH = 74;
    static final short UNKNOWN_LEADER_EPOCH = 75;

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(1, "OFFSET_OUT_OF_RANGE"),
            Map.entry(2, "CORRUPT_MESSAGE"),
            Map.entry(3, "UNKNOWN_TOPIC_OR_PARTITION"),
            Map.entry(5, "LEADER_NOT_AVAILABLE"),
            Map.entry(6, "NOT_LEADER_OR_FOLLOWER"),
            Map.entry(7, "REQUEST_TIMED_OUT"),
            Map.entry(29, "TOPIC_AUTHORIZATION_FAILED"),
            Map.entry(31, "CLUSTER_AUTHORIZATION_FAILED"),
            Map.entry(33, "UNSUPPORTED_SASL_MECHANISM"),
            Map.entry(34, "ILLEGAL_SASL_STATE"),
            Map.entry(35, "UNSUPPORTED_VERSION"),
            Map.entry(58, "SASL_AUTHENTICATION_FAILED"),
            Map.entry(74, "FENCED_LEADER_EPOCH"),
            Map.entry(75, "UNKNOWN_LEADER_EPOCH"),
            Map.entry(76, "UNSUPPORTED_COMPRESSION_TYPE"));

    private ErrorCodes() {
    }

    static String name(short code) {
        return NAMES.getOrDefault((int) code, "error " + code);
    }

    /** Errors that a fresh leader lookup can cure. */
    static boolean leaderMoved(short code) {
        return code == UNKNOWN_TOPIC_OR_PARTITION || code == LEADER_NOT_AVAILABLE || code == NOT_LEADER_OR_FOLLOWER
                || code == FENCED_LEADER_EPOCH || code == UNKNOWN_LEADER_EPOCH;
    }
}
