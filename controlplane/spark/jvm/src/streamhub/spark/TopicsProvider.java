package streamhub.spark;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.streaming.ContinuousStream;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The `topics` data source with its batch reads on the JVM. With this jar on the classpath it owns the short name
 * `topics` (Spark looks Java sources up first) and the Python source (controlplane/spark/topic_source.py) is
 * registered as `topics_python`. Planning (options, offsets, pushed filters) stays in Python: the driver's planner
 * process answers once per scan (TopicPlanner). Everything this reader does not do goes to the Python source,
 * chosen per read: streaming reads, writes, TLS and any other `kafka.ssl.*`/`kafka.sasl.*`
 * setting beyond PLAIN/SCRAM credentials, sessions where register_topic_source did not name the planner's Python
 * (Spark Connect), and sessions with `spark.streamhub.topics.jvmReader=false`.
 */
public final class TopicsProvider implements TableProvider, DataSourceRegister {
    static final String NAME = "topics";
    // The Python source's name where this provider owns NAME (topic_source.py FALLBACK_NAME).
    static final String PYTHON_NAME = "topics_python";
    // The option naming a session file of the connection's properties (options.py CONNECTION_FILE_OPTION).
    static final String CONNECTION_FILE_OPTION = "connectionFile";
    static final String JVM_READER_CONF = "spark.streamhub.topics.jvmReader";
    // The Python source's columns (reading.py SCHEMA_DDL, HEADERS_DDL).
    static final String SCHEMA_DDL = "key binary, value binary, topic string, partition int, offset long, "
            + "timestamp timestamp, timestampType int";
    static final String HEADERS_DDL = ", headers array<struct<key: string, value: binary>>";

    @Override
    public String shortName() {
        return NAME;
    }

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        boolean headers = "true".equalsIgnoreCase(options.getOrDefault("includeHeaders", "false"));
        return StructType.fromDDL(SCHEMA_DDL + (headers ? HEADERS_DDL : ""));
    }

    @Override
    public boolean supportsExternalMetadata() {
        return true;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        PythonDataSourceV2 python = new PythonDataSourceV2();
        python.setShortName(PYTHON_NAME);
        return new TopicsTable(schema, python.getTable(schema, partitioning, properties));
    }

    /** Why the JVM reader cannot take a read with these options, or null when it can. */
    static String unsupportedReason(CaseInsensitiveStringMap options) {
        SparkSession session = SparkSession.active();
        if (!Boolean.parseBoolean(session.conf().get(JVM_READER_CONF, "true"))) {
            return JVM_READER_CONF + " is false";
        }
        if (session.conf().getOption(TopicPlanner.PYTHON_CONF).isEmpty()) {
            // register_topic_source names the planner's Python in the driver's own session (not over Connect).
            return "no planner: " + TopicPlanner.PYTHON_CONF + " is not set";
        }
        if (options.containsKey(CONNECTION_FILE_OPTION)) {
            // A session file (SparkFiles) that Spark's Python workers find and the planner process does not.
            return "option " + CONNECTION_FILE_OPTION;
        }
        String protocol = options.getOrDefault("kafka.security.protocol", "PLAINTEXT").toUpperCase(Locale.ROOT);
        if (!protocol.equals("PLAINTEXT") && !protocol.equals("SASL_PLAINTEXT")) {
            return "security protocol " + protocol;
        }
        String mechanism = options.getOrDefault("kafka.sasl.mechanism",
                options.getOrDefault("kafka.sasl.mechanisms", "PLAIN")).toUpperCase(Locale.ROOT);
        if (!Set.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512").contains(mechanism)) {
            return "SASL mechanism " + mechanism;
        }
        Set<String> understood = Set.of("kafka.sasl.mechanism", "kafka.sasl.mechanisms", "kafka.sasl.username",
                "kafka.sasl.password", "kafka.sasl.jaas.config");
        for (String key : options.keySet()) {
            String lower = key.toLowerCase(Locale.ROOT);
            if (lower.startsWith("kafka.ssl.") || lower.startsWith("kafka.sasl.") && !understood.contains(lower)) {
                return "option " + key;
            }
        }
        return null;
    }

    static final class TopicsTable implements SupportsRead, SupportsWrite {
        private final StructType schema;
        private final Table python;

        TopicsTable(StructType schema, Table python) {
            this.schema = schema;
            this.python = python;
        }

        @Override
        public String name() {
            return NAME;
        }

        @Override
        @SuppressWarnings("deprecation") // Spark's Python table answers schema() too; columns() derives from it
        public StructType schema() {
            return schema;
        }

        @Override
        public Set<TableCapability> capabilities() {
            Set<TableCapability> capabilities = EnumSet.of(TableCapability.BATCH_READ);
            capabilities.addAll(python.capabilities());
            return capabilities;
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            if (unsupportedReason(options) != null) {
                return ((SupportsRead) python).newScanBuilder(options);
            }
            return new TopicsScanBuilder(schema, options, (SupportsRead) python);
        }

        @Override
        public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
            return ((SupportsWrite) python).newWriteBuilder(info);
        }
    }

    static final class TopicsScanBuilder implements ScanBuilder, SupportsPushDownRequiredColumns,
            SupportsPushDownFilters {
        private final StructType tableSchema;
        private final CaseInsensitiveStringMap options;
        private final SupportsRead python;
        private StructType readSchema;
        private Filter[] pushed = new Filter[0];

        TopicsScanBuilder(StructType tableSchema, CaseInsensitiveStringMap options, SupportsRead python) {
            this.tableSchema = tableSchema;
            this.readSchema = tableSchema;
            this.options = options;
            this.python = python;
        }

        @Override
        public void pruneColumns(StructType required) {
            readSchema = required;
        }

        /** Partition, offset and timestamp filters narrow the planned ranges; Spark checks every filter again
         * (cheap next to reading), so none is returned as handled. */
        @Override
        public Filter[] pushFilters(Filter[] filters) {
            pushed = TopicPlanner.narrowing(filters);
            return filters;
        }

        @Override
        public Filter[] pushedFilters() {
            return pushed;
        }

        @Override
        public Scan build() {
            return new TopicsScan(tableSchema, readSchema, options, pushed, python);
        }
    }

    static final class TopicsScan implements Scan, Batch {
        private final StructType tableSchema;
        private final StructType readSchema;
        private final CaseInsensitiveStringMap options;
        private final Filter[] filters;
        private final SupportsRead python;
        private TopicPlanner.Plan plan;

        TopicsScan(StructType tableSchema, StructType readSchema, CaseInsensitiveStringMap options, Filter[] filters,
                SupportsRead python) {
            this.tableSchema = tableSchema;
            this.readSchema = readSchema;
            this.options = options;
            this.filters = filters;
            this.python = python;
        }

        @Override
        public StructType readSchema() {
            return readSchema;
        }

        @Override
        public String description() {
            return "topics (JVM reader)";
        }

        @Override
        public Batch toBatch() {
            return this;
        }

        // Streams are read by the Python source (its offsets, checkpoints and admission control).
        @Override
        public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
            return python.newScanBuilder(options).build().toMicroBatchStream(checkpointLocation);
        }

        @Override
        public ContinuousStream toContinuousStream(String checkpointLocation) {
            return python.newScanBuilder(options).build().toContinuousStream(checkpointLocation);
        }

        private TopicPlanner.Plan plan() {
            if (plan == null) {
                plan = TopicPlanner.plan(options, tableSchema, filters);
            }
            return plan;
        }

        @Override
        public InputPartition[] planInputPartitions() {
            return plan().ranges.toArray(new InputPartition[0]);
        }

        @Override
        public PartitionReaderFactory createReaderFactory() {
            TopicPlanner.Plan planned = plan();
            List<String> columns = new ArrayList<>();
            for (StructField field : readSchema.fields()) {
                columns.add(TopicPlanner.sourceColumn(field.name()));
            }
            return new TopicReadSpec(planned.settings, readSchema, columns.toArray(new String[0]),
                    planned.failOnDataLoss, planned.pollTimeoutMs);
        }
    }
}
