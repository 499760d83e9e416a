import { describe, expect, it } from "vitest";

import { formatDurationMs, formatRelativeTime, formatTimestamp, fromDateTimeLocal, toDateTimeLocal } from "./time";

describe("formatTimestamp", () => {
  it("shows the instant in the given timezone, with the zone named", () => {
    const instant = "2026-03-01T23:30:00Z";
    const tokyo = formatTimestamp(instant, "Asia/Tokyo");
    const utc = formatTimestamp(instant, "UTC");

    expect(tokyo).toMatch(/08:30:00/);
    expect(tokyo).toMatch(/2/); // 2 March in Tokyo
    expect(utc).toMatch(/23:30:00|11:30:00/);
    expect(utc).toMatch(/UTC/);
    expect(tokyo).not.toEqual(utc);
  });
});

describe("formatRelativeTime", () => {
  const now = new Date("2026-03-01T12:00:00Z");

  it("picks the largest unit that fits", () => {
    expect(formatRelativeTime("2026-03-01T11:57:00Z", now)).toMatch(/3 minutes ago/);
    expect(formatRelativeTime("2026-03-01T14:00:00Z", now)).toMatch(/in 2 hours/);
    expect(formatRelativeTime("2026-03-01T12:00:00Z", now)).toMatch(/now/);
  });
});

describe("datetime-local values", () => {
  it("round-trips an instant through the browser's local time", () => {
    const iso = "2026-03-04T05:06:00.000Z";
    expect(fromDateTimeLocal(toDateTimeLocal(iso))).toBe(iso);
  });

  it("treats empty or broken values as no value", () => {
    expect(fromDateTimeLocal("")).toBeNull();
    expect(fromDateTimeLocal("not a date")).toBeNull();
    expect(toDateTimeLocal("not a date")).toBe("");
  });
});

describe("formatDurationMs", () => {
  it("uses the largest unit that divides the value exactly", () => {
    expect(formatDurationMs(2_592_000_000)).toBe("30 days");
    expect(formatDurationMs(86_400_000)).toBe("1 day");
    expect(formatDurationMs(600_000)).toBe("10 minutes");
    expect(formatDurationMs(5_400_000)).toBe("90 minutes");
    expect(formatDurationMs(1_500)).toBe("1500 ms");
  });

  it("shows a dash for values that are not durations", () => {
    expect(formatDurationMs(-1)).toBe("—");
    expect(formatDurationMs(Number.NaN)).toBe("—");
  });
});
