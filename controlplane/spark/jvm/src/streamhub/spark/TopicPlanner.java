package streamhub.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.IOException;
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
 * Plans a JVM read with the Python source's own planning code: a `python -m controlplane.spark.jvm_planning`
 * process of the driver takes the read's options, schema and narrowing filters as a JSON line on its stdin (never
 * in argv, as the options may carry credentials) and answers the offset ranges and connection settings on its
 * stdout.
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
        throw new InvalidOptions("column '" + name + "' is not a column of the topics source");
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
                throw new InvalidOptions(message);
            }
            throw new TopicReadError(kind.equals("TopicReadError") ? message : kind + ": " + message);
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
        String python = session.conf().get(PYTHON_CONF);
        String path = session.conf().get(PYTHON_PATH_CONF, "");
        byte[] line;
        try {
            line = JSON.writeValueAsBytes(request);
        } catch (IOException error) {
            throw new TopicReadError("cannot write a planning request: " + error.getMessage());
        }
        synchronized (TopicPlanner.class) {
            if (process == null || !process.matches(python, path)) {
                if (process != null) {
                    process.close();
                }
                process = new PlannerProcess(python, path);
            }
            try {
                return JSON.readTree(process.exchange(line));
            } catch (IOException | RuntimeException error) {
                // A planner that failed is not reused: the next read starts a fresh one.
                String output = process.errorOutput();
                process.close();
                process = null;
                throw new TopicReadError("the topics planner failed: " + error.getMessage()
                        + (output.isEmpty() ? "" : "\n" + output));
            }
        }
    }

    private static PlannerProcess process;

    /**
     * One Python planner per driver JVM, kept between reads (its start and imports cost a few tenths of a second,
     * more than planning): one request and one answer per line on its stdin and stdout. It ends when its stdin
     * closes, that is with this JVM at the latest.
     */
    private static final class PlannerProcess {
        private static final int KEPT_ERROR_CHARS = 4000;
        private final String python;
        private final String path;
        private final Process process;
        private final OutputStream stdin;
        private final java.io.BufferedReader stdout;
        private final StringBuilder errors = new StringBuilder();

        PlannerProcess(String python, String path) {
            this.python = python;
            this.path = path;
            ProcessBuilder builder = new ProcessBuilder(python, "-m", "controlplane.spark.jvm_planning");
            Map<String, String> environment = builder.environment();
            String inherited = environment.getOrDefault("PYTHONPATH", "");
            environment.put("PYTHONPATH", String.join(File.pathSeparator,
                    List.of(path, inherited).stream().filter(s -> !s.isEmpty()).toList()));
            try {
                process = builder.start();
            } catch (IOException error) {
                throw new TopicReadError("cannot start the topics planner (" + python + "): " + error.getMessage());
            }
            stdin = process.getOutputStream();
            stdout = new java.io.BufferedReader(
                    new java.io.InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            Thread drain = new Thread(this::drainErrors, "topics-planner-stderr");
            drain.setDaemon(true);
            drain.start();
        }

        boolean matches(String python, String path) {
            return process.isAlive() && this.python.equals(python) && this.path.equals(path);
        }

        String exchange(byte[] request) throws IOException {
            stdin.write(request);
            stdin.write('\n');
            stdin.flush();
            CompletableFuture<String> answer = CompletableFuture.supplyAsync(() -> {
                try {
                    return stdout.readLine();
                } catch (IOException error) {
                    throw new java.io.UncheckedIOException(error);
                }
            });
            String line;
            try {
                line = answer.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException error) {
                throw new IOException("no answer within " + TIMEOUT_SECONDS + " s");
            } catch (java.util.concurrent.ExecutionException error) {
                throw new IOException(error.getCause().getMessage(), error.getCause());
            } catch (InterruptedException error) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while planning a topics read");
            }
            if (line == null) {
                throw new IOException("the planner process ended");
            }
            return line;
        }

        /** The last few thousand characters the planner wrote to stderr (never the request: it is on stdin). */
        String errorOutput() {
            synchronized (errors) {
                return errors.toString().strip();
            }
        }

        private void drainErrors() {
            try (java.io.BufferedReader reader = new java.io.BufferedReader(
                    new java.io.InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    synchronized (errors) {
                        errors.append(line).append('\n');
                        if (errors.length() > KEPT_ERROR_CHARS) {
                            errors.delete(0, errors.length() - KEPT_ERROR_CHARS);
                        }
                    }
                }
            } catch (IOException ignored) {
                // The process ended.
            }
        }

        void close() {
            process.destroy();
        }
    }
}
