import { describe, expect, it } from "vitest";

import { configEntry } from "../test/configFixtures";
import { configProblem, readableValue, splitIntoUnit, toRawValue, unitOptions } from "./configValues";

const retention = configEntry({
  type: "long",
  unit: "ms",
  unlimited: "-1",
  rule: { allowed: true, minimum: 0, maximum: 30 * 86_400_000, reason: "" },
});

describe("readableValue", () => {
  it("says durations and sizes in the largest unit that fits", () => {
    expect(readableValue("86400000", retention)).toBe("1 day");
    expect(readableValue("604800000", retention)).toBe("7 days");
    expect(readableValue("3600000", retention)).toBe("1 hour");
    expect(readableValue("5400000", retention)).toBe("1.5 hours");
    expect(readableValue("250", retention)).toBe("250 ms");
    expect(readableValue("0", retention)).toBe("0 ms");
    expect(readableValue("168", configEntry({ unit: "hours" }))).toBe("7 days");
    expect(readableValue("1073741824", configEntry({ unit: "bytes" }))).toBe("1 GiB");
    expect(readableValue("1", configEntry({ unit: "bytes" }))).toBe("1 byte");
    expect(readableValue("1048588", configEntry({ unit: "bytes" }))).toBe("≈ 1 MiB");
    expect(readableValue("10485760", configEntry({ unit: "bytes_per_second" }))).toBe("10 MiB/s");
  });

  it("shows the unlimited sentinel as unlimited and leaves unit-less values alone", () => {
    expect(readableValue("-1", retention)).toBe("unlimited");
    expect(readableValue("9223372036854775807", configEntry({ unit: "ms", unlimited: "9223372036854775807" }))).toBe(
      "unlimited",
    );
    expect(readableValue("delete", configEntry())).toBe("delete");
    expect(readableValue(null, retention)).toBe("—");
    expect(readableValue("abc", retention)).toBe("abc");
  });
});

describe("units in the editor", () => {
  it("splits a raw value into the largest whole unit", () => {
    expect(splitIntoUnit("86400000", "ms")).toMatchObject({ amount: "1", unit: { label: "days" } });
    expect(splitIntoUnit("5400000", "ms")).toMatchObject({ amount: "90", unit: { label: "minutes" } });
    expect(splitIntoUnit("0", "ms")).toMatchObject({ amount: "0", unit: { label: "ms" } });
    expect(splitIntoUnit("2048", "bytes")).toMatchObject({ amount: "2", unit: { label: "KiB" } });
    expect(splitIntoUnit("x", "ms")).toBeNull();
    expect(unitOptions("hours").map((each) => each.label)).toEqual(["days", "hours"]);
  });

  it("turns an amount in a unit back into the raw value, or says why not", () => {
    const days = unitOptions("ms")[0]!;
    const hours = unitOptions("ms")[1]!;
    expect(toRawValue("1", days)).toEqual({ raw: "86400000" });
    expect(toRawValue("1.5", hours)).toEqual({ raw: "5400000" });
    expect(toRawValue("", days)).toEqual({ error: "Enter a value." });
    expect(toRawValue("-3", days)).toEqual({ error: "Enter a number of at least 0." });
    expect(toRawValue("1.0000001", unitOptions("ms")[4]!)).toHaveProperty("error");
    expect(toRawValue("1e300", days)).toHaveProperty("error");
  });
});

describe("configProblem", () => {
  it("checks the team's bounds in the config's unit", () => {
    expect(configProblem("86400000", retention)).toBeNull();
    expect(configProblem(String(31 * 86_400_000), retention)).toBe("At most 30 days (the team's policy).");
    expect(configProblem("-1", retention)).toBe("At most 30 days (the team's policy).");
    const segment = configEntry({
      type: "int",
      unit: "bytes",
      rule: { allowed: true, minimum: 1048576, maximum: null, reason: "" },
    });
    expect(configProblem("1024", segment)).toBe("At least 1 MiB (the team's policy).");
    expect(configProblem("4294967296", segment)).toBe("Must fit a Kafka int.");
  });

  it("checks types and choices, and a config the policy does not allow", () => {
    expect(configProblem("1.5", configEntry({ type: "long" }))).toBe("Must be a whole number.");
    expect(configProblem("", configEntry({ type: "long" }))).toBe("Enter a value.");
    expect(configProblem("yes", configEntry({ type: "boolean" }))).toBe("Must be true or false.");
    expect(configProblem("0.5", configEntry({ type: "double" }))).toBeNull();
    const policy = configEntry({ type: "list", choices: ["delete", "compact"], multiple: true });
    expect(configProblem("compact,delete", policy)).toBeNull();
    expect(configProblem("compact,archive", policy)).toBe("archive is not one of delete, compact.");
    expect(configProblem("zstd", configEntry({ choices: ["gzip", "zstd"] }))).toBeNull();
    expect(
      configProblem("1", configEntry({ rule: { allowed: false, minimum: null, maximum: null, reason: "" } })),
    ).toBe("The team's policy does not allow setting this config.");
  });
});
