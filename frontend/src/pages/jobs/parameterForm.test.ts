import { describe, expect, it } from "vitest";

import { buildParameters, fieldsOf } from "./parameterForm";

const KEY_SKEW = { source: "TopicRange", top: "int" };

describe("fieldsOf", () => {
  it("expands a topic range and maps Python types to inputs", () => {
    const fields = fieldsOf({ ...KEY_SKEW, ratio: "float", sum_field: "str | None", bucket_seconds: "list[int]" });
    expect(fields.map((field) => [field.path, field.kind, field.required])).toEqual([
      ["source.topic", "text", true],
      ["source.starting_offsets", "text", false],
      ["source.ending_offsets", "text", false],
      ["source.starting_timestamp", "timestamp", false],
      ["source.ending_timestamp", "timestamp", false],
      ["source.fail_on_data_loss", "boolean", false],
      ["top", "integer", false],
      ["ratio", "number", false],
      ["sum_field", "text", false],
      ["bucket_seconds", "integer-list", false],
    ]);
  });
});

describe("buildParameters", () => {
  it("nests topic-range values, converts types and leaves blanks to the job's defaults", () => {
    const fields = fieldsOf({ ...KEY_SKEW, bucket_seconds: "list[int]", expect_json: "bool" });
    const result = buildParameters(fields, {
      "source.topic": " orders ",
      "source.fail_on_data_loss": "false",
      "source.starting_timestamp": "2026-01-05T10:00:00Z",
      top: "5",
      bucket_seconds: "60, 300",
      expect_json: "",
    });
    expect(result).toEqual({
      parameters: {
        source: { topic: "orders", fail_on_data_loss: false, starting_timestamp: Date.UTC(2026, 0, 5, 10) },
        top: 5,
        bucket_seconds: [60, 300],
      },
    });
  });

  it("names every field that is missing or malformed", () => {
    const result = buildParameters(fieldsOf({ ...KEY_SKEW, extra: "dict[str, int]" }), {
      top: "2.5",
      extra: "{nope",
    });
    expect(result).toEqual({
      errors: {
        "source.topic": "Topic is required.",
        top: "Top must be a whole number.",
        extra: "Extra must be valid JSON.",
      },
    });
  });
});
