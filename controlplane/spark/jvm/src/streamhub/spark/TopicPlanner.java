package streamhub.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Plans a JVM read with the Python source's own planning code: runs `python -m controlplane.spark.jvm_planning`
 * in the driver with the read's options, schema and narrowing filters as JSON on its stdin (never in argv, as the
 * options may carry credentials) and takes back the offset ranges and connection settings from its stdout.
 * `register_topic_source` names the interpreter and the path of the `controlplane` package in the session's
 * conf (spark.streamhub.topics.python / .pythonPath).
 */
final class TopicPlanner {
    static final String PYTHON_CONF = "spark.streamhub.topics.python";
    static final String PYTHON_PATH_CONF = "spark.streamhub.topics.pythonPath";
    private static final long TIMEOUT_SECONDS = 300;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> COLUMNS = List.of("key", "value", "topic", "partition", "offset",
            "timestamp", "timestampType", "headers");

    private TopicPlanner() {
    }

    static final class Plan {
        final List<TopicRangePartition> ranges = new ArrayList<>();
        ConnectionSettings settings;
        boolean failOnDataLoss;
        long pollTimeoutMs;
    }

    /** The source column behind a field name (Spark's names are case-insensitive). */
    static String sourceColumn(String name) {
        for (String column : COLUMNS) {
            if (column.equalsIgnoreCase(name)) {
                return column;
            }
        }
        throw new IllegalArgumentException("column '" + name + "' is not a column of the topics source");
    }

    private static String narrowedColumn(String attribute) {
        for (String column : List.of("partition", "offset", "timestamp")) {
            if (column.equalsIgnoreCase(attribute)) {
                return column;
            }
        }
        return null;
    }

    /** The filters the planner may use to narrow the ranges (pushdown.py decides what each one does). */
    static Filter[] narrowing(Filter[] filters) {
        List<Filter> result = new ArrayList<>();
        for (Filter filter : filters) {
            String attribute = attribute(filter);
            if (attribute != null && narrowedColumn(attribute) != null) {
                result.add(filter);
            }
        }
        return result.toArray(new Filter[0]);
    }

    private static String attribute(Filter filter) {
        if (filter instanceof EqualTo f) {
            return f.attribute();
        } else if (filter instanceof GreaterThan f) {
            return f.attribute();
        } else if (filter instanceof GreaterThanOrEqual f) {
            return f.attribute();
        } else if (filter instanceof LessThan f) {
            return f.attribute();
        } else if (filter instanceof LessThanOrEqual f) {
            return f.attribute();
        } else if (filter instanceof In f) {
            return f.attribute();
        }
        return null;
    }

    private static ObjectNode filterJson(Filter filter) {
        ObjectNode node = JSON.createObjectNode();
        node.put("op", filter.getClass().getSimpleName());
        node.put("column", attribute(filter));
        Object[] values;
        if (filter instanceof In f) {
            values = f.values();
        } else if (filter instanceof EqualTo f) {
            values = new Object[] {f.value()};
        } else if (filter instanceof GreaterThan f) {
            values = new Object[] {f.value()};
        } else if (filter instanceof GreaterThanOrEqual f) {
            values = new Object[] {f.value()};
        } else if (filter instanceof LessThan f) {
            values = new Object[] {f.value()};
        } else {
            values = new Object[] {((LessThanOrEqual) filter).value()};
        }
        ArrayNode array = node.putArray("values");
        for (Object value : values) {
            ObjectNode one = array.addObject();
            if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
                one.put("int", ((Number) value).longValue());
            } else if (value instanceof Timestamp stamp) {
                one.put("timestamp_us", Math.addExact(Math.multiplyExact(stamp.getTime() / 1000, 1_000_000L),
                        stamp.getNanos() / 1000));
            } else if (value instanceof Instant instant) {
                one.put("timestamp_us", Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L),
                        instant.getNano() / 1000));
            } else {
                one.put("other", String.valueOf(value)); // not used for narrowing
            }
        }
        return node;
    }

    static Plan plan(CaseInsensitiveStringMap options, StructType tableSchema, Filter[] filters) {
        ObjectNode request = JSON.createObjectNode();
        ObjectNode optionsNode = request.putObject("options");
        for (Map.Entry<String, String> entry : options.entrySet()) {
            optionsNode.put(entry.getKey(), entry.getValue());
        }
        request.put("schema", tableSchema.json());
        ArrayNode filterNodes = request.putArray("filters");
        for (Filter filter : filters) {
            filterNodes.add(filterJson(filter));
        }
        JsonNode answer = run(request);
        if (answer.hasNonNull("error")) {
            String kind = answer.path("error").path("type").asText();
            String message = answer.path("error").path("message").asText();
            if (kind.equals("InvalidOptions")) {
                throw new IllegalArgumentException(message);
            }
            throw new KafkaException(message);
        }
        Plan plan = new Plan();
        for (JsonNode range : answer.path("ranges")) {
            plan.ranges.add(new TopicRangePartition(range.get(0).asText(), range.get(1).asInt(),
                    range.get(2).asLong(), range.get(3).asLong()));
        }
        JsonNode settings = answer.path("settings");
        List<String> bootstrap = new ArrayList<>();
        settings.path("bootstrap").forEach(address -> bootstrap.add(address.asText()));
        plan.settings = new ConnectionSettings(bootstrap, settings.path("security_protocol").asText(),
                settings.path("sasl_mechanism").asText(), settings.path("username").asText(),
                settings.path("password").asText(), settings.path("read_committed").asBoolean());
        plan.failOnDataLoss = answer.path("fail_on_data_loss").asBoolean(true);
        plan.pollTimeoutMs = answer.path("poll_timeout_ms").asLong(10_000);
        return plan;
    }

    private static JsonNode run(ObjectNode request) {
        SparkSession session = SparkSession.active();
        String python = session.conf().get(PYTHON_CONF, defaultPython());
        String path = session.conf().get(PYTHON_PATH_CONF, "");
        ProcessBuilder builder = new ProcessBuilder(python, "-m", "controlplane.spark.jvm_planning");
        Map<String, String> environment = builder.environment();
        String inherited = environment.getOrDefault("PYTHONPATH", "");
        String joined = String.join(File.pathSeparator,
                List.of(path, inherited).stream().filter(s -> !s.isEmpty()).toList());
        environment.put("PYTHONPATH", joined);
        Process process;
        try {
            process = builder.start();
        } catch (IOException error) {
            throw new KafkaException("cannot start the topics planner (" + python + "): " + error.getMessage());
        }
        try {
            CompletableFuture<byte[]> stdout = drain(process.getInputStream());
            CompletableFuture<byte[]> stderr = drain(process.getErrorStream());
            try (OutputStream stdin = process.getOutputStream()) {
                stdin.write(JSON.writeValueAsBytes(request));
            }
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new KafkaException("the topics planner did not answer within " + TIMEOUT_SECONDS + " s");
            }
            byte[] out = stdout.get(10, TimeUnit.SECONDS);
            if (process.exitValue() != 0) {
                String errors = new String(stderr.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8).strip();
                int from = Math.max(0, errors.length() - 2000);
                throw new KafkaException("the topics planner failed (exit " + process.exitValue() + "): "
                        + errors.substring(from));
            }
            return JSON.readTree(out);
        } catch (IOException | java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException error) {
            throw new KafkaException("the topics planner failed: " + error);
        } catch (InterruptedException error) {
            Thread.currentThread().interrupt();
            throw new KafkaException("interrupted while planning a topics read");
        } finally {
            process.destroyForcibly();
        }
    }

    private static CompletableFuture<byte[]> drain(InputStream stream) {
        return CompletableFuture.supplyAsync(() -> {
            try (stream) {
                return stream.readAllBytes();
            } catch (IOException error) {
                return new byte[0];
            }
        });
    }

    private static String defaultPython() {
        for (String variable : List.of("PYSPARK_DRIVER_PYTHON", "PYSPARK_PYTHON")) {
            String value = System.getenv(variable);
            if (value != null && !value.isEmpty()) {
                return value;
            }
        }
        return "python3";
    }
}
