/* Bulk decoder for the records of one uncompressed Kafka v2 record batch (REFERENCE.md section 2).
 *
 * Python walks the batch headers (a few per megabyte); this walks the records (thousands per batch) and
 * writes them straight into Arrow-shaped column buffers, so no Python object is made per record.
 * Every length is checked against the input: malformed data returns -1, it never reads out of bounds.
 */
#include <stdint.h>
#include <string.h>

typedef struct {
    int64_t *offsets;        /* record offsets */
    int64_t *timestamps;     /* milliseconds */
    int32_t *key_ends;       /* Arrow binary offsets: entry i+1 is the end of key i (entry 0 set by caller) */
    uint8_t *key_valid;      /* one byte per record: 0 for a null key */
    uint8_t *key_data;       /* NULL when keys are not wanted: they are checked and skipped, never copied */
    int32_t *value_ends;
    uint8_t *value_valid;
    uint8_t *value_data;     /* NULL when values are not wanted */
    int64_t record_capacity;
    int64_t key_capacity;
    int64_t value_capacity;
    int64_t count;           /* records written so far (in/out) */
    int64_t key_nulls;
    int64_t value_nulls;
} columns_t;

/* Reads an unsigned LEB128 varint; returns 0 when the input ends inside it. */
static int read_uvarint(const uint8_t *p, const uint8_t *end, const uint8_t **next, uint64_t *out) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64 && p < end; shift += 7) {
        uint8_t byte = *p++;
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *next = p;
            *out = value;
            return 1;
        }
    }
    return 0;
}

static int read_varint(const uint8_t *p, const uint8_t *end, const uint8_t **next, int64_t *out) {
    uint64_t raw;
    if (!read_uvarint(p, end, next, &raw)) return 0;
    *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1); /* zigzag */
    return 1;
}

/* One nullable byte field (length -1 = null) into a column; `keep` is 0 for records outside the range
 * and for a column nobody asked for (data == NULL). */
static int read_field(const uint8_t **p, const uint8_t *end, int keep, int64_t index, int32_t *ends,
                      uint8_t *valid, uint8_t *data, int64_t capacity, int64_t *nulls) {
    int64_t length;
    if (!read_varint(*p, end, p, &length)) return 0;
    if (length < -1 || length > end - *p) return 0;
    if (keep) {
        int32_t start = ends[index];
        if (length < 0) {
            valid[index] = 0;
            ends[index + 1] = start;
            (*nulls)++;
        } else {
            if (length > capacity - start) return 0;
            memcpy(data + start, *p, (size_t)length);
            valid[index] = 1;
            ends[index + 1] = start + (int32_t)length;
        }
    }
    if (length > 0) *p += length;
    return 1;
}

/* Decodes `record_count` records of `length` bytes at `data`, keeping offsets in [min_offset, end_offset).
 * Returns the records kept, or -1 for malformed records or too little room in the columns. */
int64_t decode_records(const uint8_t *data, int64_t length, int64_t record_count, int64_t base_offset,
                       int64_t base_timestamp, int64_t min_offset, int64_t end_offset, columns_t *out) {
    const uint8_t *p = data, *end = data + length;
    int64_t kept = 0;
    for (int64_t n = 0; n < record_count; n++) {
        int64_t record_length, timestamp_delta, offset_delta;
        if (!read_varint(p, end, &p, &record_length)) return -1;
        if (record_length < 1 || record_length > end - p) return -1;
        const uint8_t *record_end = p + record_length;
        p++; /* attributes: unused in v2 */
        if (!read_varint(p, record_end, &p, &timestamp_delta)) return -1;
        if (!read_varint(p, record_end, &p, &offset_delta)) return -1;
        int64_t offset = base_offset + offset_delta;
        int keep = offset >= min_offset && offset < end_offset;
        int64_t index = out->count;
        if (keep && index >= out->record_capacity) return -1;
        if (!read_field(&p, record_end, keep && out->key_data, index, out->key_ends, out->key_valid,
                        out->key_data, out->key_capacity, &out->key_nulls))
            return -1;
        if (!read_field(&p, record_end, keep && out->value_data, index, out->value_ends, out->value_valid,
                        out->value_data, out->value_capacity, &out->value_nulls))
            return -1;
        /* Headers are skipped: the record length says where the next record starts. */
        if (keep) {
            out->offsets[index] = offset;
            out->timestamps[index] = base_timestamp + timestamp_delta;
            out->count = index + 1;
            kept++;
        }
        p = record_end;
    }
    return kept;
}
