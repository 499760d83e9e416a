import { describe, expect, it } from "vitest";

import { diffLines, prettySchema, splitLines } from "./lineDiff";

describe("diffLines", () => {
  it("marks every line the same when nothing changed", () => {
    const rows = diffLines("a\nb\n", "a\nb");
    expect(rows.map((row) => row.kind)).toEqual(["same", "same"]);
    expect(rows[1]).toEqual({ kind: "same", left: { number: 2, text: "b" }, right: { number: 2, text: "b" } });
  });

  it("pairs a replaced line as changed and keeps the line numbers of each side", () => {
    const rows = diffLines("a\nb\nc", "a\nB\nc\nd");
    expect(rows).toEqual([
      { kind: "same", left: { number: 1, text: "a" }, right: { number: 1, text: "a" } },
      { kind: "changed", left: { number: 2, text: "b" }, right: { number: 2, text: "B" } },
      { kind: "same", left: { number: 3, text: "c" }, right: { number: 3, text: "c" } },
      { kind: "added", left: undefined, right: { number: 4, text: "d" } },
    ]);
  });

  it("shows removed lines with nothing opposite", () => {
    const rows = diffLines("a\nb\nc\nd", "a\nd");
    expect(rows.map((row) => [row.kind, row.left?.text, row.right?.text])).toEqual([
      ["same", "a", "a"],
      ["removed", "b", undefined],
      ["removed", "c", undefined],
      ["same", "d", "d"],
    ]);
  });

  it("diffs against an empty text", () => {
    expect(diffLines("", "x\ny").map((row) => row.kind)).toEqual(["added", "added"]);
    expect(diffLines("x", "").map((row) => row.kind)).toEqual(["removed"]);
    expect(splitLines("")).toEqual([]);
  });
});

describe("prettySchema", () => {
  it("indents Avro and JSON Schema text and leaves Protobuf as written", () => {
    expect(prettySchema('{"type":"string"}', undefined)).toBe('{\n  "type": "string"\n}');
    expect(prettySchema('{"type":"object"}', "JSON")).toBe('{\n  "type": "object"\n}');
    expect(prettySchema('syntax = "proto3";', "PROTOBUF")).toBe('syntax = "proto3";');
    expect(prettySchema('"string"', undefined)).toBe('"string"');
    expect(prettySchema("not json", undefined)).toBe("not json");
  });
});
