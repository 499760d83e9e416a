package streamhub.spark;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Fetch requests for one topic partition, sent to its leader (found with Metadata from the bootstrap servers). */
final class PartitionFetcher implements AutoCloseable {
    private static final int TIMEOUT_MILLIS = 30_000;
    private static final int MAX_WAIT_MILLIS = 100;

    private final ConnectionSettings settings;
    private final String topic;
    private final int partition;
    private final int maxBytes;
    private KafkaConnection connection;

    PartitionFetcher(ConnectionSettings settings, String topic, int partition, int maxBytes) {
        this.settings = settings;
        this.topic = topic;
        this.partition = partition;
        this.maxBytes = maxBytes;
    }

    /** One partition's part of a Fetch v5 answer; the records are data[recordsStart, recordsEnd). */
    static final class Fetched {
        short errorCode;
        long highWatermark;
        long lastStableOffset;
        long logStartOffset; // -1 when unknown: Kafka leaves it out of an OFFSET_OUT_OF_RANGE answer
        final List<long[]> abortedTransactions = new ArrayList<>(); // {first offset, producer id}
        KafkaConnection.Frame frame;
        int recordsStart;
        int recordsEnd;
        long nextOffset; // where the fetch thread went on from
    }

    /** Fetches from `offset`, reading the answer into `buffer` when it fits (else into a new frame). */
    Fetched fetch(long offset, KafkaConnection.Frame buffer) throws IOException {
        if (connection == null) {
            connection = connectToLeader();
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
        DataOutputStream body = new DataOutputStream(bytes);
        body.writeInt(-1); // replica id: a consumer
        body.writeInt(MAX_WAIT_MILLIS);
        body.writeInt(1); // min bytes
        body.writeInt(maxBytes);
        body.writeByte(settings.readCommitted ? 1 : 0);
        body.writeInt(1);
        KafkaConnection.writeString(body, topic);
        body.writeInt(1);
        body.writeInt(partition);
        body.writeLong(offset);
        body.writeLong(-1); // log start offset: only followers send one
        body.writeInt(maxBytes);
        KafkaConnection.Frame frame;
        try {
            frame = connection.request(KafkaConnection.FETCH, (short) 5, bytes.toByteArray(), buffer);
        } catch (IOException error) {
            closeConnection();
            throw error;
        }
        return parse(frame);
    }

    private Fetched parse(KafkaConnection.Frame frame) throws IOException {
        KafkaConnection.Reader reader = new KafkaConnection.Reader(frame);
        reader.int32(); // throttle time
        int topics = reader.int32();
        reader.nullableString();
        int partitions = reader.int32();
        if (topics != 1 || partitions != 1) {
            throw new IOException("a fetch of one partition answered " + topics + "/" + partitions);
        }
        Fetched fetched = new Fetched();
        int answered = reader.int32();
        if (answered != partition) {
            throw new IOException("asked for partition " + partition + ", got " + answered);
        }
        fetched.errorCode = reader.int16();
        fetched.highWatermark = reader.int64();
        fetched.lastStableOffset = reader.int64();
        fetched.logStartOffset = reader.int64();
        int aborted = reader.int32();
        for (int i = 0; i < aborted; i++) { // -1: null
            long producerId = reader.int64();
            long firstOffset = reader.int64();
            fetched.abortedTransactions.add(new long[] {firstOffset, producerId});
        }
        int length = Math.max(reader.int32(), 0); // -1: null
        fetched.frame = frame;
        fetched.recordsStart = reader.position;
        reader.skip(length);
        fetched.recordsEnd = reader.position;
        return fetched;
    }

    /** The partition's log start offset, from its leader (ListOffsets v1 for the earliest offset). */
    long logStartOffset() throws IOException {
        if (connection == null) {
            connection = connectToLeader();
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
        DataOutputStream body = new DataOutputStream(bytes);
        body.writeInt(-1); // replica id: a consumer
        body.writeInt(1);
        KafkaConnection.writeString(body, topic);
        body.writeInt(1);
        body.writeInt(partition);
        body.writeLong(-2); // the earliest offset
        KafkaConnection.Reader reader;
        try {
            reader = new KafkaConnection.Reader(
                    connection.request(KafkaConnection.LIST_OFFSETS, (short) 1, bytes.toByteArray()));
        } catch (IOException error) {
            closeConnection();
            throw error;
        }
        if (reader.int32() != 1) {
            throw new IOException("a ListOffsets of one topic answered another count");
        }
        reader.nullableString();
        if (reader.int32() != 1 || reader.int32() != partition) {
            throw new IOException("a ListOffsets of partition " + partition + " answered another");
        }
        short error = reader.int16();
        reader.int64(); // timestamp
        long offset = reader.int64();
        if (error != 0) {
            throw new TopicReadError("the log start of " + topic + "-" + partition + ": " + ErrorCodes.name(error));
        }
        return offset;
    }

    /** After an error that a fresh leader lookup can cure: the next fetch looks the leader up again. */
    void closeConnection() {
        if (connection != null) {
            connection.close();
            connection = null;
        }
    }

    private KafkaConnection connectToLeader() throws IOException {
        IOException last = null;
        for (String address : settings.bootstrap) {
            KafkaConnection bootstrap;
            try {
                bootstrap = new KafkaConnection(address, settings, TIMEOUT_MILLIS);
            } catch (IOException error) {
                last = error;
                continue;
            }
            String leader;
            try {
                leader = leaderAddress(bootstrap);
            } catch (IOException error) {
                bootstrap.close();
                last = error;
                continue;
            }
            if (leader.equals(address)) {
                return bootstrap;
            }
            bootstrap.close();
            return new KafkaConnection(leader, settings, TIMEOUT_MILLIS);
        }
        throw new IOException("no bootstrap server of " + settings.bootstrap + " answered"
                + (last == null ? "" : ": " + last.getMessage()), last);
    }

    private String leaderAddress(KafkaConnection bootstrap) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream body = new DataOutputStream(bytes);
        body.writeInt(1);
        KafkaConnection.writeString(body, topic);
        body.writeBoolean(false); // never create topics
        KafkaConnection.Reader reader = new KafkaConnection.Reader(
                bootstrap.request(KafkaConnection.METADATA, (short) 4, bytes.toByteArray()));
        reader.int32(); // throttle time
        Map<Integer, String> brokers = new HashMap<>();
        int brokerCount = reader.int32();
        for (int i = 0; i < brokerCount; i++) {
            int node = reader.int32();
            String host = reader.nullableString();
            int port = reader.int32();
            reader.nullableString(); // rack
            brokers.put(node, host + ":" + port);
        }
        reader.nullableString(); // cluster id
        reader.int32(); // controller id
        int topicCount = reader.int32();
        for (int t = 0; t < topicCount; t++) {
            short topicError = reader.int16();
            String name = reader.nullableString();
            reader.int8(); // internal
            int partitionCount = reader.int32();
            for (int p = 0; p < partitionCount; p++) {
                reader.int16(); // partition error
                int index = reader.int32();
                int leader = reader.int32();
                reader.skip(4 * Math.max(reader.int32(), 0)); // replicas
                reader.skip(4 * Math.max(reader.int32(), 0)); // in-sync replicas
                if (topic.equals(name) && index == partition && brokers.containsKey(leader)) {
                    return brokers.get(leader);
                }
            }
            if (topic.equals(name) && topicError != 0) {
                throw new TopicReadError("reading " + topic + "-" + partition + ": " + ErrorCodes.name(topicError));
            }
        }
        throw new IOException("no leader known for " + topic + "-" + partition);
    }

    @Override
    public void close() {
        closeConnection();
    }
}
