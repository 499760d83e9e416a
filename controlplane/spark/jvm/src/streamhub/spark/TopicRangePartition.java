package streamhub.spark;

import org.apache.spark.sql.connector.read.InputPartition;

/** The records of one topic partition with offsets in [start, end): one Spark task. */
final class TopicRangePartition implements InputPartition {
    private static final long serialVersionUID = 1L;

    final String topic;
    final int partition;
    final long start;
    final long end;

    TopicRangePartition(String topic, int partition, long start, long end) {
        this.topic = topic;
        this.partition = partition;
        this.start = start;
        this.end = end;
    }

    @Override
    public String toString() {
        return topic + "-" + partition + "[" + start + ", " + end + ")";
    }
}
