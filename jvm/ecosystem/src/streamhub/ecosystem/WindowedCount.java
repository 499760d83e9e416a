package streamhub.ecosystem;

import java.io.FileInputStream;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * A Kafka Streams application with exactly_once_v2: counts records per key in tumbling one-hour windows (a window
 * store with its changelog topic) and writes every update as "key@windowStart" -> "count". The record cache is off,
 * so each input record gives exactly one update: for a key with n records the output holds counts 1..n, each once.
 *
 * <p>Usage: WindowedCount client.properties application.id input output state.dir. Runs until killed.
 */
public final class WindowedCount {
  private WindowedCount() {}

  public static void main(String[] args) throws Exception {
    Properties properties = new Properties();
    try (FileInputStream in = new FileInputStream(args[0])) {
      properties.load(in);
    }
    properties.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
    properties.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    properties.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
    properties.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
    properties.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
    properties.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, -1);
    StreamsBuilder builder = new StreamsBuilder();
    builder.stream(args[2], Consumed.with(Serdes.String(), Serdes.String()))
        .groupByKey()
        .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofHours(1)))
        .count(Materialized.as("windowed-counts"))
        .toStream()
        .map((window, count) -> KeyValue.pair(window.key() + "@" + window.window().start(), Long.toString(count)))
        .to(args[3], Produced.with(Serdes.String(), Serdes.String()));
    KafkaStreams streams = new KafkaStreams(builder.build(), properties);
    CountDownLatch stopped = new CountDownLatch(1);
    streams.setStateListener((now, before) -> {
      System.out.println("state " + before + " -> " + now);
      if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
        stopped.countDown();
      }
    });
    Runtime.getRuntime().addShutdownHook(new Thread(() -> streams.close(Duration.ofSeconds(10))));
    streams.start();
    stopped.await();
    System.exit(1);
  }
}
