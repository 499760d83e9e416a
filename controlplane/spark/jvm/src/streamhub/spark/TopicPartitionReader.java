package streamhub.spark;

import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import net.jpountz.lz4.LZ4FrameInputStream;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xerial.snappy.SnappyInputStream;

/**
 * Reads one offset range [start, end) of one partition: one Fetch answer becomes one ColumnarBatch, its records
 * decoded (record batch v2, REFERENCE.md section 2) straight into Spark's column vectors, which are reused from
 * batch to batch. A fetch thread keeps fetching ahead while the task decodes and Spark consumes. Control batches
 * and, with read_committed, the records of aborted transactions are skipped; offsets missing inside the range
 * (compaction, markers) are simply not there.
 */
final class TopicPartitionReader implements PartitionReader<ColumnarBatch> {
    static final int FETCH_MAX_BYTES = 8 * 1024 * 1024;
    private static final int HEADER_SIZE = 61; // base offset .. record count
    private static final int LOG_OVERHEAD = 12; // base offset, batch length
    private static final int CODEC_MASK = 0x07;
    private static final int TIMESTAMP_TYPE_FLAG = 0x08;
    private static final int TRANSACTIONAL_FLAG = 0x10;
    private static final int CONTROL_FLAG = 0x20;
    private static final int CONTROL_ABORT = 0;
    // A record batch inflating past this is refused rather than allowed to fill the executor's heap.
    private static final int MAX_DECOMPRESSED_BYTES = 512 * 1024 * 1024;
    private static final int LEADER_RETRIES = 10;
    private static final Logger LOG = LoggerFactory.getLogger(TopicPartitionReader.class);
    // Answers the fetch thread may hold ahead of the task: with one, the broker idled while Spark took a batch in.
    private static final int FETCH_AHEAD = 2;
    private static final long LEADER_BACKOFF_MILLIS = 200;

    private final TopicRangePartition range;
    private final TopicReadSpec spec;
    private final PartitionFetcher fetcher;
    private final ExecutorService fetchThread;
    // Answers fetched ahead and waiting to be decoded, and the frames decoded ones free again.
    private final BlockingQueue<Object> fetched = new ArrayBlockingQueue<>(FETCH_AHEAD);
    private final BlockingQueue<KafkaConnection.Frame> freeFrames = new ArrayBlockingQueue<>(FETCH_AHEAD + 2);
    private final WritableColumnVector[] writable;
    private final ColumnVector[] vectors;
    private final boolean countsOnly;
    private final AbortedTransactions aborted = new AbortedTransactions();
    private volatile boolean closing;
    private long nextOffset;
    // The range's start, or the log start where records were deleted before they were read (failOnDataLoss=false).
    private long firstWanted;
    private long idleSince = System.currentTimeMillis();
    private int leaderRetries;
    private byte[] scratch = new byte[1 << 20];
    private ColumnarBatch batch;

    TopicPartitionReader(TopicRangePartition range, TopicReadSpec spec) {
        this.range = range;
        this.spec = spec;
        this.nextOffset = range.start;
        this.firstWanted = range.start;
        this.fetcher = new PartitionFetcher(spec.settings, range.topic, range.partition, FETCH_MAX_BYTES);
        this.fetchThread = Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "topic-fetch-" + range.topic + "-" + range.partition);
            thread.setDaemon(true);
            return thread;
        });
        StructField[] fields = spec.schema.fields();
        this.writable = new WritableColumnVector[fields.length];
        this.vectors = new ColumnVector[fields.length];
        boolean recordLevel = false;
        for (int i = 0; i < fields.length; i++) {
            String column = spec.columns[i];
            if (!column.equals("topic") && !column.equals("partition")) {
                writable[i] = new OnHeapColumnVector(4096, fields[i].dataType());
                vectors[i] = writable[i];
                recordLevel = true;
            }
        }
        this.countsOnly = !recordLevel;
        startFetching();
    }

    /**
     * The fetch thread fetches ahead from `nextOffset`, each request right after the previous answer (the offset
     * after its last complete batch), until FETCH_AHEAD answers wait; it stops after an answer that carries an
     * error or nothing new, which next() judges before it starts fetching again.
     */
    private void startFetching() {
        long from = nextOffset;
        fetchThread.submit(() -> {
            long offset = from;
            try {
                while (!closing && offset < range.end) {
                    PartitionFetcher.Fetched answer = fetcher.fetch(offset, freeFrames.poll());
                    long next = answer.errorCode == 0 ? offsetAfter(answer, offset) : offset;
                    answer.nextOffset = next;
                    fetched.put(answer);
                    if (next <= offset) {
                        return;
                    }
                    offset = next;
                }
            } catch (InterruptedException stopped) {
                Thread.currentThread().interrupt();
            } catch (Throwable error) { // handed to the task's thread, which fails the read with it
                try {
                    fetched.put(error);
                } catch (InterruptedException stopped) {
                    Thread.currentThread().interrupt();
                }
            }
        });
    }

    /** The offset after the last complete batch of an answer (walkBatches' result, without decoding anything). */
    private long offsetAfter(PartitionFetcher.Fetched answer, long from) {
        byte[] data = answer.frame.data;
        int position = answer.recordsStart;
        long next = from;
        while (position + HEADER_SIZE <= answer.recordsEnd && next < range.end) {
            int batchLength = int32(data, position + 8);
            int batchEnd = position + LOG_OVERHEAD + batchLength;
            if (batchLength < HEADER_SIZE - LOG_OVERHEAD || batchEnd > answer.recordsEnd || batchEnd < position) {
                break;
            }
            long lastOffset = int64(data, position) + int32(data, position + 23);
            next = Math.max(next, lastOffset + 1);
            position = batchEnd;
        }
        return next;
    }

    @Override
    public boolean next() throws IOException {
        while (nextOffset < range.end) {
            PartitionFetcher.Fetched part = awaitFetch();
            if (part.errorCode != 0) {
                if (part.errorCode != ErrorCodes.OFFSET_OUT_OF_RANGE) {
                    handleError(part.errorCode);
                } else if (!skipLostRecords(part)) {
                    return false;
                }
                startFetching();
                continue;
            }
            leaderRetries = 0;
            aborted.add(part.abortedTransactions);
            List<long[]> wanted = new ArrayList<>();
            long reached = walkBatches(part, wanted);
            if (reached != part.nextOffset) {
                throw new IllegalStateException("fetched ahead from " + part.nextOffset + ", read up to " + reached);
            }
            boolean progressed = reached > nextOffset;
            nextOffset = reached;
            int rows = decode(part, wanted);
            freeFrames.offer(part.frame); // decoded: its bytes are in the vectors now
            if (rows > 0) {
                return true;
            }
            if (progressed) {
                idleSince = System.currentTimeMillis();
                continue;
            }
            // Nothing new: at the end of the (committed) log the rest of the range is gone.
            long logEnd = spec.settings.readCommitted && part.lastStableOffset >= 0
                    ? part.lastStableOffset : part.highWatermark;
            if (logEnd <= nextOffset) {
                if (spec.failOnDataLoss) {
                    throw new TopicReadError(range.topic + "-" + range.partition + " ends at " + logEnd
                            + ", before the planned end " + range.end + "; set failOnDataLoss=false to accept this");
                }
                return false;
            }
            if (System.currentTimeMillis() - idleSince > spec.pollTimeoutMs) {
                throw new TopicReadError("no records from " + range.topic + "-" + range.partition + " within "
                        + spec.pollTimeoutMs + " ms while reading [" + range.start + ", " + range.end + ")");
            }
            startFetching(); // the fetch thread stopped at this answer, which brought nothing new
        }
        return false;
    }

    private PartitionFetcher.Fetched awaitFetch() throws IOException {
        Object item;
        try {
            item = fetched.take();
        } catch (InterruptedException error) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while fetching " + range, error);
        }
        if (item instanceof PartitionFetcher.Fetched answer) {
            return answer;
        }
        if (item instanceof TopicReadError known) {
            throw known;
        }
        Throwable cause = (Throwable) item;
        throw new IOException("fetching " + range.topic + "-" + range.partition + " from offset " + nextOffset
                + ": " + cause.getMessage(), cause);
    }

    /**
     * An offset out of range: records deleted (retention, DeleteRecords) or the log truncated since the read was
     * planned. With failOnDataLoss=false the read goes on from the log start, as the Python source and Spark's Kafka
     * source do, and a warning names what was lost; returns false when nothing of the range is left. With true it
     * is an error naming the partition and the offsets.
     */
    private boolean skipLostRecords(PartitionFetcher.Fetched part) throws IOException {
        long logStart = part.logStartOffset >= 0 ? part.logStartOffset : fetcher.logStartOffset();
        String where = range.topic + "-" + range.partition;
        if (spec.failOnDataLoss) {
            throw new TopicReadError("offset " + nextOffset + " of " + where + " is out of range (the log starts at "
                    + logStart + "; records deleted or truncated since the read was planned [" + range.start + ", "
                    + range.end + ")); set failOnDataLoss=false to read from the log start instead");
        }
        if (nextOffset < logStart) {
            long resumeAt = Math.min(logStart, range.end);
            LOG.warn("{}: offsets [{}, {}) were deleted before they were read (failOnDataLoss=false); reading on from {}",
                    where, nextOffset, resumeAt, resumeAt);
            nextOffset = resumeAt;
            firstWanted = resumeAt;
            idleSince = System.currentTimeMillis();
            return nextOffset < range.end;
        }
        // Beyond the log's end: it was truncated below the offset; the rest of the range is gone.
        LOG.warn("{}: offset {} is beyond the log's end (truncated, failOnDataLoss=false); [{}, {}) is not read",
                where, nextOffset, nextOffset, range.end);
        return false;
    }

    private void handleError(short code) {
        if (ErrorCodes.leaderMoved(code) && leaderRetries++ < LEADER_RETRIES) {
            fetcher.closeConnection();
            try {
                Thread.sleep(LEADER_BACKOFF_MILLIS);
            } catch (InterruptedException error) {
                Thread.currentThread().interrupt();
                throw new TopicReadError("interrupted while looking up the leader of " + range);
            }
            return;
        }
        throw new TopicReadError("reading " + range.topic + "-" + range.partition + ": " + ErrorCodes.name(code));
    }

    /**
     * Walks the batch headers of a record set: collects {position, end} of the complete batches with records to
     * decode, counts the batches wholly in the range when no column needs their records, and returns the offset to
     * fetch next. A trailing partial batch (cut by max bytes) is left for the next fetch.
     */
    private long walkBatches(PartitionFetcher.Fetched part, List<long[]> wanted) throws IOException {
        byte[] data = part.frame.data;
        int position = part.recordsStart;
        long next = nextOffset;
        countedRows = 0;
        while (position + HEADER_SIZE <= part.recordsEnd && next < range.end) {
            long baseOffset = int64(data, position);
            int batchLength = int32(data, position + 8);
            int batchEnd = position + LOG_OVERHEAD + batchLength;
            if (batchLength < HEADER_SIZE - LOG_OVERHEAD || batchEnd > part.recordsEnd || batchEnd < position) {
                break;
            }
            byte magic = data[position + 16];
            if (magic != 2) {
                throw new TopicReadError("record batch magic " + magic + " in " + range.topic + "-"
                        + range.partition + " at offset " + baseOffset + ": only v2 is read");
            }
            int attributes = int16(data, position + 21);
            long lastOffset = baseOffset + int32(data, position + 23);
            long producerId = int64(data, position + 43);
            int recordCount = int32(data, position + 57);
            int start = position;
            position = batchEnd;
            if (lastOffset < next) {
                continue;
            }
            next = lastOffset + 1;
            if ((attributes & CONTROL_FLAG) != 0) {
                aborted.control(producerId, lastOffset, controlType(data, start, batchEnd, attributes));
                continue;
            }
            if (aborted.skips(producerId, lastOffset, attributes)) {
                continue;
            }
            if (countsOnly && baseOffset >= firstWanted && lastOffset < range.end) {
                countedRows += recordCount; // every record is in the range: the header says how many
                continue;
            }
            wanted.add(new long[] {start, batchEnd, recordCount});
        }
        return next;
    }

    private int countedRows;

    private int decode(PartitionFetcher.Fetched part, List<long[]> wanted) throws IOException {
        int capacity = countedRows;
        for (long[] one : wanted) {
            capacity += (int) one[2];
        }
        if (capacity == 0) {
            return 0;
        }
        for (WritableColumnVector vector : writable) {
            if (vector != null) {
                vector.reset();
                vector.reserve(capacity);
            }
        }
        int rows = 0;
        for (long[] one : wanted) {
            rows = decodeBatch(part.frame.data, (int) one[0], (int) one[1], rows);
        }
        rows += countedRows;
        if (rows == 0) {
            return 0;
        }
        StructField[] fields = spec.schema.fields();
        for (int i = 0; i < fields.length; i++) {
            if (writable[i] == null) {
                ConstantColumnVector constant = new ConstantColumnVector(rows, fields[i].dataType());
                if (spec.columns[i].equals("topic")) {
                    constant.setUtf8String(UTF8String.fromString(range.topic));
                } else {
                    constant.setInt(range.partition);
                }
                vectors[i] = constant;
            }
        }
        batch = new ColumnarBatch(vectors, rows);
        return rows;
    }

    /** Decodes the records of one batch with offsets in the range into the vectors from row `row` on. */
    private int decodeBatch(byte[] frame, int start, int end, int row) throws IOException {
        long baseOffset = int64(frame, start);
        int attributes = int16(frame, start + 21);
        long baseTimestamp = int64(frame, start + 27);
        long maxTimestamp = int64(frame, start + 35);
        int recordCount = int32(frame, start + 57);
        boolean appendTime = (attributes & TIMESTAMP_TYPE_FLAG) != 0;
        byte[] data = frame;
        int position = start + HEADER_SIZE;
        int limit = end;
        if ((attributes & CODEC_MASK) != 0) {
            limit = decompress(frame, position, end, attributes);
            data = scratch;
            position = 0;
        }
        Varints in = new Varints(data, position, limit, baseOffset);
        for (int n = 0; n < recordCount; n++) {
            int length = in.varint();
            int recordEnd = in.position + length;
            if (length < 0 || recordEnd > limit || recordEnd < in.position) {
                throw in.malformed();
            }
            in.limit = recordEnd;
            in.position++; // attributes: unused
            long timestampDelta = in.varlong();
            long offset = baseOffset + in.varint();
            int keyLength = in.varint();
            int keyStart = in.skipBytes(keyLength);
            int valueLength = in.varint();
            int valueStart = in.skipBytes(valueLength);
            if (offset >= firstWanted && offset < range.end) {
                put(row, offset, appendTime ? maxTimestamp : baseTimestamp + timestampDelta, appendTime,
                        data, keyStart, keyLength, valueStart, valueLength, in);
                row++;
            }
            in.position = recordEnd;
            in.limit = limit;
        }
        return row;
    }

    private void put(int row, long offset, long timestampMillis, boolean appendTime, byte[] data, int keyStart,
            int keyLength, int valueStart, int valueLength, Varints in) throws IOException {
        for (int i = 0; i < writable.length; i++) {
            WritableColumnVector vector = writable[i];
            if (vector == null) {
                continue;
            }
            switch (spec.columns[i]) {
                case "key" -> putBinary(vector, row, data, keyStart, keyLength);
                case "value" -> putBinary(vector, row, data, valueStart, valueLength);
                case "offset" -> vector.putLong(row, offset);
                case "timestamp" -> vector.putLong(row, timestampMillis * 1000); // Spark: microseconds
                case "timestampType" -> vector.putInt(row, appendTime ? 1 : 0);
                case "headers" -> putHeaders(vector, row, in);
                default -> throw new IllegalStateException("not a column: " + spec.columns[i]);
            }
        }
    }

    private static void putBinary(WritableColumnVector vector, int row, byte[] data, int start, int length) {
        if (length < 0) {
            vector.putNull(row);
        } else {
            vector.putByteArray(row, data, start, length);
        }
    }

    /** Headers as confluent-kafka gives them to the Python source: none is a null array. */
    private static void putHeaders(WritableColumnVector vector, int row, Varints in) throws IOException {
        int count = in.varint();
        if (count <= 0) {
            vector.putNull(row);
            return;
        }
        WritableColumnVector pairs = vector.arrayData();
        WritableColumnVector keys = pairs.getChild(0);
        WritableColumnVector values = pairs.getChild(1);
        int first = pairs.getElementsAppended();
        for (int h = 0; h < count; h++) {
            int index = first + h;
            pairs.reserve(index + 1);
            keys.reserve(index + 1);
            values.reserve(index + 1);
            int keyLength = in.varint();
            int keyStart = in.skipBytes(keyLength);
            int valueLength = in.varint();
            int valueStart = in.skipBytes(valueLength);
            putBinary(keys, index, in.data, keyStart, Math.max(keyLength, 0));
            putBinary(values, index, in.data, valueStart, valueLength);
            pairs.putNotNull(index);
        }
        pairs.addElementsAppended(count);
        vector.putArray(row, first, count);
    }

    private int decompress(byte[] data, int start, int end, int attributes) throws IOException {
        try (InputStream stream = decompressing(new ByteArrayInputStream(data, start, end - start), attributes)) {
            int length = 0;
            while (true) {
                if (length == scratch.length) {
                    if (scratch.length >= MAX_DECOMPRESSED_BYTES) {
                        throw new IOException("it inflates past " + MAX_DECOMPRESSED_BYTES + " bytes");
                    }
                    scratch = java.util.Arrays.copyOf(scratch, Math.min(scratch.length * 2, MAX_DECOMPRESSED_BYTES));
                }
                int read = stream.read(scratch, length, scratch.length - length);
                if (read < 0) {
                    return length;
                }
                length += read;
            }
        } catch (IOException | RuntimeException error) {
            throw new TopicReadError("a record batch of " + range.topic + "-" + range.partition
                    + " does not decompress: " + error);
        }
    }

    private static InputStream decompressing(InputStream raw, int attributes) throws IOException {
        return switch (attributes & CODEC_MASK) {
            case 1 -> new GZIPInputStream(raw, 64 * 1024);
            case 2 -> new SnappyInputStream(raw);
            case 3 -> new LZ4FrameInputStream(raw);
            case 4 -> new ZstdInputStreamNoFinalizer(raw);
            default -> throw new TopicReadError("compression codec " + (attributes & CODEC_MASK) + " is unknown");
        };
    }

    /** The type in the key of a control batch's record (key: version int16, type int16). */
    private int controlType(byte[] frame, int start, int end, int attributes) throws IOException {
        byte[] data = frame;
        int position = start + HEADER_SIZE;
        int limit = end;
        if ((attributes & CODEC_MASK) != 0) {
            limit = decompress(frame, position, end, attributes);
            data = scratch;
            position = 0;
        }
        Varints in = new Varints(data, position, limit, int64(frame, start));
        in.varint(); // record length
        in.position++; // attributes
        in.varlong(); // timestamp delta
        in.varint(); // offset delta
        int keyLength = in.varint();
        int keyStart = in.skipBytes(keyLength);
        if (keyLength < 4) {
            throw new TopicReadError("a control record without a key in " + range);
        }
        return int16(data, keyStart + 2);
    }

    @Override
    public ColumnarBatch get() {
        return batch;
    }

    @Override
    public void close() {
        // Stops the fetch thread: interrupted if it waits to hand over an answer, and a fetch in flight fails
        // when its connection closes.
        closing = true;
        fetchThread.shutdownNow();
        fetcher.close();
        try {
            fetchThread.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException error) {
            Thread.currentThread().interrupt();
        }
        for (WritableColumnVector vector : writable) {
            if (vector != null) {
                vector.close();
            }
        }
    }

    static long int64(byte[] data, int at) {
        return ((long) int32(data, at) << 32) | (int32(data, at + 4) & 0xffffffffL);
    }

    static int int32(byte[] data, int at) {
        return ((data[at] & 0xff) << 24) | ((data[at + 1] & 0xff) << 16) | ((data[at + 2] & 0xff) << 8)
                | (data[at + 3] & 0xff);
    }

    static int int16(byte[] data, int at) {
        return (short) (((data[at] & 0xff) << 8) | (data[at + 1] & 0xff));
    }

    /** Zigzag varints within [position, limit): running past the limit is a malformed record, never a wild read. */
    static final class Varints {
        final byte[] data;
        int position;
        int limit;
        final long baseOffset;

        Varints(byte[] data, int position, int limit, long baseOffset) {
            this.data = data;
            this.position = position;
            this.limit = limit;
            this.baseOffset = baseOffset;
        }

        long varlong() throws IOException {
            long raw = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                if (position >= limit) {
                    throw malformed();
                }
                byte b = data[position++];
                raw |= (long) (b & 0x7f) << shift;
                if (b >= 0) {
                    return (raw >>> 1) ^ -(raw & 1);
                }
            }
            throw malformed();
        }

        int varint() throws IOException {
            long value = varlong();
            if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
                throw malformed();
            }
            return (int) value;
        }

        /** Skips a nullable byte field of `length` bytes (-1: null) and returns where it starts. */
        int skipBytes(int length) throws IOException {
            int start = position;
            if (length < -1 || length > limit - position) {
                throw malformed();
            }
            if (length > 0) {
                position += length;
            }
            return start;
        }

        TopicReadError malformed() {
            return new TopicReadError("a malformed record in the batch at offset " + baseOffset);
        }
    }

    /**
     * read_committed over raw batches: a producer's transactional records are dropped from the aborted transaction's
     * first offset (as the Fetch answers list them) up to its ABORT marker.
     */
    static final class AbortedTransactions {
        private final TreeSet<List<Long>> pending = new TreeSet<>((a, b) ->
                a.get(0).equals(b.get(0)) ? Long.compare(a.get(1), b.get(1)) : Long.compare(a.get(0), b.get(0)));
        private final Set<Long> open = new HashSet<>();

        void add(List<long[]> listed) {
            for (long[] one : listed) {
                pending.add(List.of(one[0], one[1]));
            }
        }

        private void openUpTo(long lastOffset) {
            while (!pending.isEmpty() && pending.first().get(0) <= lastOffset) {
                open.add(pending.pollFirst().get(1));
            }
        }

        void control(long producerId, long lastOffset, int type) {
            openUpTo(lastOffset);
            if (type == CONTROL_ABORT) {
                open.remove(producerId);
            }
        }

        boolean skips(long producerId, long lastOffset, int attributes) {
            openUpTo(lastOffset);
            return (attributes & TRANSACTIONAL_FLAG) != 0 && open.contains(producerId);
        }
    }
}
