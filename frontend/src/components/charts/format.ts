const COMPACT = new Intl.NumberFormat(undefined, { notation: "compact", maximumFractionDigits: 1 });

/** 1234 → "1.2K": axis ticks and legends have little room. */
export function formatCompact(value: number): string {
  return COMPACT.format(value);
}

const DURATION_UNITS: [string, number][] = [
  ["d", 86_400],
  ["h", 3_600],
  ["min", 60],
  ["s", 1],
];

/** Seconds as the largest unit that fits, e.g. 90 → "1.5 min", 0.4 → "0.4 s". */
export function formatSeconds(seconds: number): string {
  const sign = seconds < 0 ? "-" : "";
  const magnitude = Math.abs(seconds);
  for (const [unit, size] of DURATION_UNITS) {
    if (magnitude >= size || unit === "s") {
      const scaled = magnitude / size;
      return `${sign}${scaled >= 10 ? Math.round(scaled) : Number(scaled.toFixed(1))} ${unit}`;
    }
  }
  return `${seconds} s`;
}
