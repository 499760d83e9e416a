package streamhub.ecosystem;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Scenarios of the Java clients (producer, consumer, admin) against a cluster. Each returns what it saw (records
 * per partition in the order read, offsets, group descriptions) and leaves the judging to the Python test.
 */
final class ClientChecks {
  /** Producers left inside an open transaction by open_transaction, by transactional id. */
  private static final Map<String, KafkaProducer<String, String>> OPEN = new HashMap<>();

  private ClientChecks() {}

  static Object run(String name, Map<String, Object> params) throws Exception {
    return switch (name) {
      case "open_transaction" -> openTransaction(params);
      case "close_producer" -> closeProducer(params);
      case "produce" -> produce(params);
      case "consume" -> consume(params);
      case "transactional_produce" -> transactionalProduce(params);
      case "copy_exactly_once" -> copyExactlyOnce(params);
      case "admin" -> admin(params);
      case "share_consume" -> shareConsume(params);
      default -> throw new IllegalArgumentException("unknown check " + name);
    };
  }

  @SuppressWarnings("unchecked")
  static Properties properties(Map<String, Object> params) {
    Properties properties = new Properties();
    properties.putAll((Map<String, Object>) params.get("properties"));
    if (params.containsKey("extra")) {
      properties.putAll((Map<String, Object>) params.get("extra"));
    }
    return properties;
  }

  private static int integer(Map<String, Object> params, String name) {
    return ((Number) params.get(name)).intValue();
  }

  private static KafkaProducer<String, String> producer(Properties properties) {
    return new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer());
  }

  private static KafkaConsumer<String, String> consumer(Properties properties) {
    return new KafkaConsumer<>(properties, new StringDeserializer(), new StringDeserializer());
  }

  /** `count` records keyed "k<i % keys>" with value "<key>:<i>", acks=all and idempotence; returns offsets. */
  private static Object produce(Map<String, Object> params) throws Exception {
    Properties properties = properties(params);
    properties.putIfAbsent("enable.idempotence", "true");
    properties.putIfAbsent("acks", "all");
    String topic = (String) params.get("topic");
    int keys = integer(params, "keys");
    List<Map<String, Object>> sent = new ArrayList<>();
    try (KafkaProducer<String, String> producer = producer(properties)) {
      List<java.util.concurrent.Future<RecordMetadata>> pending = new ArrayList<>();
      for (int index = 0; index < integer(params, "count"); index++) {
        String key = "k" + (index % keys);
        pending.add(producer.send(new ProducerRecord<>(topic, key, key + ":" + index)));
      }
      for (java.util.concurrent.Future<RecordMetadata> future : pending) {
        RecordMetadata metadata = future.get();
        sent.add(Map.of("partition", metadata.partition(), "offset", metadata.offset()));
      }
    }
    return sent;
  }

  /** Reads `count` records with one consumer of `group`, committing synchronously; records per partition. */
  private static Object consume(Map<String, Object> params) throws Exception {
    Properties properties = properties(params);
    properties.put("group.id", params.get("group"));
    properties.putIfAbsent("auto.offset.reset", "earliest");
    properties.put("enable.auto.commit", "false");
    int count = integer(params, "count");
    Map<Integer, List<List<Object>>> read = new HashMap<>();
    int total = 0;
    long deadline = System.currentTimeMillis() + 60_000;
    try (KafkaConsumer<String, String> consumer = consumer(properties)) {
      consumer.subscribe(List.of((String) params.get("topic")));
      while (total < count && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
          read.computeIfAbsent(record.partition(), p -> new ArrayList<>()).add(List.of(record.offset(), record.value()));
          total++;
        }
        consumer.commitSync();
      }
      // A little longer: anything past `count` would be a duplicate or a record that should not be there.
      long settle = System.currentTimeMillis() + 500;
      while (System.currentTimeMillis() < settle) {
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
          read.computeIfAbsent(record.partition(), p -> new ArrayList<>()).add(List.of(record.offset(), record.value()));
        }
      }
      consumer.commitSync();
    }
    return read;
  }

  /**
   * One KafkaShareConsumer of `group` (share.auto.offset.reset=earliest) acknowledging explicitly the records of
   * `produce` ("<key>:<i>"): i % 3 == 1 rejected, i % 3 == 2 released on its first delivery, the rest accepted; commitSync after every
   * poll, until `count` records are done, then `settle_ms` more of polling. Returns each delivery as [value,
   * delivery count, partition, offset], in order.
   */
  private static Object shareConsume(Map<String, Object> params) throws Exception {
    Properties properties = properties(params);
    String group = (String) params.get("group");
    try (Admin admin = Admin.create(properties)) {
      AlterConfigOp earliest =
          new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET);
      admin
          .incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(earliest)))
          .all()
          .get();
    }
    properties.put("group.id", group);
    properties.put("share.acknowledgement.mode", "explicit");
    int count = integer(params, "count");
    List<List<Object>> deliveries = new ArrayList<>();
    Set<String> done = new HashSet<>();
    long deadline = System.currentTimeMillis() + 90_000;
    try (KafkaShareConsumer<String, String> consumer =
        new KafkaShareConsumer<>(properties, new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(List.of((String) params.get("topic")));
      long settleUntil = Long.MAX_VALUE;
      while (System.currentTimeMillis() < Math.min(deadline, settleUntil)) {
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
          int delivery = record.deliveryCount().map(Short::intValue).orElse(-1);
          deliveries.add(List.of(record.value(), delivery, record.partition(), record.offset()));
          int index = Integer.parseInt(record.value().substring(record.value().indexOf(':') + 1));
          AcknowledgeType type;
          if (index % 3 == 1) {
            type = AcknowledgeType.REJECT;
          } else if (index % 3 == 2 && delivery == 1) {
            type = AcknowledgeType.RELEASE;
          } else {
            type = AcknowledgeType.ACCEPT;
          }
          consumer.acknowledge(record, type);
          if (type != AcknowledgeType.RELEASE) {
            done.add(record.value());
          }
        }
        for (Map.Entry<TopicIdPartition, Optional<KafkaException>> result : consumer.commitSync().entrySet()) {
          if (result.getValue().isPresent()) {
            throw result.getValue().get();
          }
        }
        if (done.size() >= count && settleUntil == Long.MAX_VALUE) {
          settleUntil = System.currentTimeMillis() + integer(params, "settle_ms");
        }
      }
    }
    return deliveries;
  }

  /** `transactions` transactions of `per_transaction` records each; every third one is aborted. */
  private static Object transactionalProduce(Map<String, Object> params) throws Exception {
    Properties properties = properties(params);
    properties.put("transactional.id", params.get("transactional_id"));
    String topic = (String) params.get("topic");
    List<String> committed = new ArrayList<>();
    try (KafkaProducer<String, String> producer = producer(properties)) {
      producer.initTransactions();
      int index = 0;
      for (int transaction = 0; transaction < integer(params, "transactions"); transaction++) {
        producer.beginTransaction();
        List<String> values = new ArrayList<>();
        for (int record = 0; record < integer(params, "per_transaction"); record++, index++) {
          String key = "k" + (index % 4);
          values.add(key + ":" + index);
          producer.send(new ProducerRecord<>(topic, key, key + ":" + index));
        }
        try {
          if (transaction % 3 == 2) {
            producer.abortTransaction();
          } else {
            producer.commitTransaction();
            committed.addAll(values);
          }
        } catch (RuntimeException failed) {
          throw new IllegalStateException("ending transaction " + transaction + " failed", failed);
        }
      }
    }
    return committed;
  }

  /**
   * Consume-transform-produce with exactly-once: a consumer of `group` (its group.protocol as given) reads `source`,
   * a transactional producer writes each value to `target` with the consumer's offsets in the same transaction,
   * one transaction per poll, until `count` records are copied.
   */
  private static Object copyExactlyOnce(Map<String, Object> params) throws Exception {
    Properties consumerProperties = properties(params);
    consumerProperties.put("group.id", params.get("group"));
    consumerProperties.put("auto.offset.reset", "earliest");
    consumerProperties.put("enable.auto.commit", "false");
    consumerProperties.put("isolation.level", "read_committed");
    Properties producerProperties = properties(params);
    producerProperties.remove("group.protocol");
    producerProperties.put("transactional.id", params.get("transactional_id"));
    int count = integer(params, "count");
    int copied = 0;
    int transactions = 0;
    long deadline = System.currentTimeMillis() + 90_000;
    try (KafkaConsumer<String, String> consumer = consumer(consumerProperties);
        KafkaProducer<String, String> producer = producer(producerProperties)) {
      producer.initTransactions();
      consumer.subscribe(List.of((String) params.get("source")));
      while (copied < count && System.currentTimeMillis() < deadline) {
        var records = consumer.poll(Duration.ofMillis(200));
        if (records.isEmpty()) {
          continue;
        }
        producer.beginTransaction();
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (ConsumerRecord<String, String> record : records) {
          producer.send(new ProducerRecord<>((String) params.get("target"), record.key(), record.value()));
          offsets.put(new TopicPartition(record.topic(), record.partition()), new OffsetAndMetadata(record.offset() + 1));
          copied++;
        }
        producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
        producer.commitTransaction();
        transactions++;
      }
    }
    return Map.of("copied", copied, "transactions", transactions);
  }

  /** Admin calls a tool does not make: cluster, topic and group descriptions, offsets, record deletion. */
  private static Object admin(Map<String, Object> params) throws Exception {
    Properties properties = properties(params);
    String topic = (String) params.get("topic");
    Map<String, Object> result = new LinkedHashMap<>();
    try (Admin admin = Admin.create(properties)) {
      result.put("nodes", admin.describeCluster().nodes().get().size());
      result.put("controller", admin.describeCluster().controller().get().id());
      admin.createTopics(List.of(new NewTopic(topic, 2, (short) integer(params, "replication")))).all().get();
      try (KafkaProducer<String, String> producer = producer(properties)) {
        for (int index = 0; index < 20; index++) {
          producer.send(new ProducerRecord<>(topic, index % 2, null, "v" + index)).get();
        }
      }
      TopicPartition first = new TopicPartition(topic, 0);
      admin.deleteRecords(Map.of(first, RecordsToDelete.beforeOffset(4))).all().get();
      result.put("earliest", admin.listOffsets(Map.of(first, OffsetSpec.earliest())).all().get().get(first).offset());
      result.put("latest", admin.listOffsets(Map.of(first, OffsetSpec.latest())).all().get().get(first).offset());
      var description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
      result.put("partitions", description.partitions().size());
      result.put("replicas", description.partitions().get(0).replicas().size());
      String group = (String) params.get("group");
      if (group != null) {
        ConsumerGroupDescription described = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
        result.put("group_type", described.type().toString());
        result.put("group_state", described.groupState().toString());
        result.put("group_members", described.members().size());
        Set<TopicPartition> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().keySet();
        result.put("group_committed_partitions", committed.size());
      }
    }
    return result;
  }

  /** Begins a transaction, writes `records` records to one partition and leaves it open. */
  private static Object openTransaction(Map<String, Object> params) throws Exception {
    Properties properties = properties(params);
    String transactionalId = (String) params.get("transactional_id");
    properties.put("transactional.id", transactionalId);
    KafkaProducer<String, String> producer = producer(properties);
    producer.initTransactions();
    producer.beginTransaction();
    String topic = (String) params.get("topic");
    int partition = integer(params, "partition");
    RecordMetadata first = null;
    for (int index = 0; index < integer(params, "records"); index++) {
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
      producer.close(Duration.ofSeconds(5));
    }
    return null;
  }
}
