/*
 * A small librdkafka load generator, so that the client is not the bottleneck when we measure the broker.
 * Python producers spend ~1 µs of interpreter time per message; this spends a few hundred nanoseconds.
 *
 *   kafka_loadgen produce -b HOST:PORT -t TOPIC -n COUNT -s SIZE [-l LINGER_MS] [-a ACKS] [-z CODEC] [-X k=v]...
 *   kafka_loadgen consume -b HOST:PORT -t TOPIC -n COUNT [-p PARTITIONS] [-X k=v]...
 *
 * Prints one JSON line: messages, bytes, seconds, msg_per_s, mb_per_s (and latency percentiles for produce,
 * measured from produce() to the delivery report).
 */
#include <errno.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int compare_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

struct options {
    const char *mode, *brokers, *topic, *linger, *acks, *codec;
    long count, size, partitions;
    const char *extra[32];
    int extra_count;
};

static void die(const char *message, const char *detail) {
    fprintf(stderr, "kafka_loadgen: %s%s%s\n", message, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value) {
    char err[512];
    if (rd_kafka_conf_set(conf, key, value, err, sizeof err) != RD_KAFKA_CONF_OK) die("bad config", err);
}

static rd_kafka_conf_t *base_conf(const struct options *o) {
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", o->brokers);
    for (int i = 0; i < o->extra_count; i++) {
        char key[256];
        const char *eq = strchr(o->extra[i], '=');
        if (!eq || (size_t)(eq - o->extra[i]) >= sizeof key) die("-X needs key=value", o->extra[i]);
        memcpy(key, o->extra[i], eq - o->extra[i]);
        key[eq - o->extra[i]] = 0;
        set(conf, key, eq + 1);
    }
    return conf;
}

/* Latencies in µs, indexed by message sequence number carried in the message opaque. */
static int64_t *sent_at, *latency;
static long delivered, failed;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
    (void)rk;
    (void)opaque;
    long seq = (long)(intptr_t)m->_private;
    if (m->err) {
        if (failed++ < 5) fprintf(stderr, "delivery failed: %s\n", rd_kafka_err2str(m->err));
        return;
    }
    latency[delivered++] = now_us() - sent_at[seq];
}

static int run_produce(const struct options *o) {
    char err[512];
    rd_kafka_conf_t *conf = base_conf(o);
    set(conf, "linger.ms", o->linger);
    set(conf, "acks", o->acks);
    set(conf, "compression.codec", o->codec);
    set(conf, "queue.buffering.max.messages", "2000000");
    set(conf, "queue.buffering.max.kbytes", "2097151");
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!rk) die("cannot create producer", err);

    char *payload = malloc(o->size);
    for (long i = 0; i < o->size; i++) payload[i] = (char)('a' + i % 26);
    sent_at = malloc(sizeof(int64_t) * o->count);
    latency = malloc(sizeof(int64_t) * o->count);

    /* rd_kafka_produce_batch enqueues thousands of messages per call (no copy: the payload is static), which
     * costs far less per message than one producev call each. */
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);
    enum { CHUNK = 2000 };
    static rd_kafka_message_t chunk[CHUNK];
    int64_t start = now_us();
    long seq = 0;
    while (seq < o->count) {
        int n = (int)(o->count - seq < CHUNK ? o->count - seq : CHUNK);
        int64_t t = now_us();
        for (int i = 0; i < n; i++) {
            memset(&chunk[i], 0, sizeof chunk[i]);
            chunk[i].payload = payload;
            chunk[i].len = (size_t)o->size;
            chunk[i]._private = (void *)(intptr_t)(seq + i);
            sent_at[seq + i] = t;
        }
        if (rd_kafka_produce_batch(rkt, RD_KAFKA_PARTITION_UA, 0, chunk, n) < n) {
            /* Refused messages (queue full) go again one by one once delivery reports made room. */
            for (int i = 0; i < n; i++) {
                if (!chunk[i].err) continue;
                if (chunk[i].err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                    die("produce failed", rd_kafka_err2str(chunk[i].err));
                while (rd_kafka_produce(rkt, RD_KAFKA_PARTITION_UA, 0, payload, (size_t)o->size, NULL, 0,
                                        chunk[i]._private) == -1) {
                    if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        die("produce failed", rd_kafka_err2str(rd_kafka_last_error()));
                    rd_kafka_poll(rk, 5);
                }
            }
        }
        seq += n;
        rd_kafka_poll(rk, 0);
    }
    while (rd_kafka_outq_len(rk) > 0) rd_kafka_poll(rk, 5);
    double seconds = (now_us() - start) / 1e6;

    qsort(latency, delivered, sizeof(int64_t), compare_i64);
    double p50 = delivered ? latency[delivered / 2] / 1000.0 : 0;
    double p99 = delivered ? latency[(long)(delivered * 0.99)] / 1000.0 : 0;
    double max = delivered ? latency[delivered - 1] / 1000.0 : 0;
    printf("{\"mode\": \"produce\", \"messages\": %ld, \"failed\": %ld, \"bytes\": %ld, \"seconds\": %.3f, "
           "\"msg_per_s\": %.0f, \"mb_per_s\": %.1f, \"p50_ms\": %.2f, \"p99_ms\": %.2f, \"max_ms\": %.2f}\n",
           delivered, failed, delivered * o->size, seconds, delivered / seconds,
           delivered * (double)o->size / seconds / 1e6, p50, p99, max);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return failed ? 2 : 0;
}

static int run_consume(const struct options *o) {
    char err[512];
    rd_kafka_conf_t *conf = base_conf(o);
    set(conf, "group.id", "kafka-loadgen");
    set(conf, "enable.auto.commit", "false");
    set(conf, "enable.partition.eof", "false");
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    if (!rk) die("cannot create consumer", err);
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new((int)o->partitions);
    for (long p = 0; p < o->partitions; p++)
        rd_kafka_topic_partition_list_add(parts, o->topic, (int32_t)p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    if (rd_kafka_assign(rk, parts)) die("assign failed", NULL);

    /* Batch consumption: one call hands over thousands of messages, so the client's per-message cost is a
     * pointer walk and the broker, not the consumer loop, sets the rate. */
    rd_kafka_queue_t *queue = rd_kafka_queue_get_consumer(rk);
    enum { BATCH = 10000 };
    static rd_kafka_message_t *batch[BATCH];
    long messages = 0, bytes = 0;
    int64_t start = 0, deadline = now_us() + 120 * 1000000LL;
    while (messages < o->count && now_us() < deadline) {
        ssize_t n = rd_kafka_consume_batch_queue(queue, 100, batch, BATCH);
        if (n < 0) die("consume failed", rd_kafka_err2str(rd_kafka_last_error()));
        for (ssize_t i = 0; i < n; i++) {
            rd_kafka_message_t *m = batch[i];
            if (!m->err) {
                if (!start) start = now_us();  // time from the first record: excludes connection set-up
                messages++;
                bytes += (long)m->len;
            } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                fprintf(stderr, "consume error: %s\n", rd_kafka_message_errstr(m));
            }
            rd_kafka_message_destroy(m);
        }
    }
    rd_kafka_queue_destroy(queue);
    double seconds = (now_us() - start) / 1e6;
    printf("{\"mode\": \"consume\", \"messages\": %ld, \"bytes\": %ld, \"seconds\": %.3f, "
           "\"msg_per_s\": %.0f, \"mb_per_s\": %.1f}\n",
           messages, bytes, seconds, messages / seconds, bytes / seconds / 1e6);
    rd_kafka_topic_partition_list_destroy(parts);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return messages < o->count ? 2 : 0;
}

int main(int argc, char **argv) {
    struct options o = {.linger = "5", .acks = "1", .codec = "none", .count = 1000000, .size = 100,
                        .partitions = 1};
    if (argc < 2) die("usage: kafka_loadgen produce|consume -b BROKERS -t TOPIC [options]", NULL);
    o.mode = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *flag = argv[i], *value = argv[i + 1];
        if (!strcmp(flag, "-b")) o.brokers = value;
        else if (!strcmp(flag, "-t")) o.topic = value;
        else if (!strcmp(flag, "-n")) o.count = atol(value);
        else if (!strcmp(flag, "-s")) o.size = atol(value);
        else if (!strcmp(flag, "-l")) o.linger = value;
        else if (!strcmp(flag, "-a")) o.acks = value;
        else if (!strcmp(flag, "-z")) o.codec = value;
        else if (!strcmp(flag, "-p")) o.partitions = atol(value);
        else if (!strcmp(flag, "-X") && o.extra_count < 32) o.extra[o.extra_count++] = value;
        else die("unknown flag", flag);
    }
    if (!o.brokers || !o.topic) die("-b and -t are required", NULL);
    if (!strcmp(o.mode, "produce")) return run_produce(&o);
    if (!strcmp(o.mode, "consume")) return run_consume(&o);
    die("mode must be produce or consume", o.mode);
}
