package streamhub.ecosystem;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/** Scenarios of the Java clients (producer, consumer, admin) against a cluster, each returning what it saw. */
final class ClientChecks {
  /** Producers left inside an open transaction by open_transaction, by transactional id. */
  private static final Map<String, KafkaProducer<String, String>> OPEN = new HashMap<>();

  private ClientChecks() {}

  static Object run(String name, Map<String, Object> params) throws Exception {
    return switch (name) {
      case "open_transaction" -> openTransaction(params);
      case "close_producer" -> closeProducer(params);
      default -> throw new IllegalArgumentException("unknown check " + name);
    };
  }

  @SuppressWarnings("unchecked")
  static Properties properties(Map<String, Object> params) {
    Properties properties = new Properties();
    properties.putAll((Map<String, Object>) params.get("properties"));
    return properties;
  }

  /** Begins a transaction, writes `records` records to one partition and leaves it open. */
  private static Object openTransaction(Map<String, Object> params) throws Exception {
    Properties properties = properties(params);
    String transactionalId = (String) params.get("transactional_id");
    properties.put("transactional.id", transactionalId);
    KafkaProducer<String, String> producer =
        new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer());
    producer.initTransactions();
    producer.beginTransaction();
    String topic = (String) params.get("topic");
    int partition = ((Number) params.get("partition")).intValue();
    RecordMetadata first = null;
    for (int index = 0; index < ((Number) params.get("records")).intValue(); index++) {
      RecordMetadata sent = producer.send(new ProducerRecord<>(topic, partition, null, "open-" + index)).get();
      first = first == null ? sent : first;
    }
    OPEN.put(transactionalId, producer);
    Map<String, Object> result = new LinkedHashMap<>();
    result.put("first_offset", first == null ? -1 : first.offset());
    return result;
  }

  private static Object closeProducer(Map<String, Object> params) {
    KafkaProducer<String, String> producer = OPEN.remove((String) params.get("transactional_id"));
    if (producer != null) {
      producer.close(java.time.Duration.ofSeconds(5));
    }
    return null;
  }
}
