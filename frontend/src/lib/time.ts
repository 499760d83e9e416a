const TIME_ZONE_KEY = "console.timeZone";

/** The browser's own IANA timezone. */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The timezone picked on the settings page, or null to follow the browser. */
export function storedTimeZone(): string | null {
  try {
    const zone = window.localStorage.getItem(TIME_ZONE_KEY);
    return zone && isKnownTimeZone(zone) ? zone : null;
  } catch {
    // Storage can be blocked; the browser's zone is then used.
    return null;
  }
}

/** Remembers the zone in this browser; null goes back to the browser's own. */
export function storeTimeZone(zone: string | null): void {
  try {
    if (zone) window.localStorage.setItem(TIME_ZONE_KEY, zone);
    else window.localStorage.removeItem(TIME_ZONE_KEY);
  } catch {
    // The choice then lasts only until the page reloads.
  }
}

/** The IANA timezone of the person using the console, e.g. "Europe/Berlin": their pick, else the browser's. */
export function userTimeZone(): string {
  return storedTimeZone() ?? browserTimeZone();
}

/** Date and time in the user's locale and timezone, with the zone named. */
export function formatTimestamp(value: string | number | Date, timeZone: string = userTimeZone()): string {
  return new Intl.DateTimeFormat(undefined, {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    timeZone,
    timeZoneName: "short",
  }).format(new Date(value));
}

const RELATIVE_UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["week", 7 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
];

/** "3 minutes ago", "in 2 hours": for recent events where the age matters more than the instant. */
export function formatRelativeTime(value: string | number | Date, now: Date = new Date()): string {
  const seconds = Math.round((new Date(value).getTime() - now.getTime()) / 1000);
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  for (const [unit, unitSeconds] of RELATIVE_UNITS) {
    if (Math.abs(seconds) >= unitSeconds || unit === "second") {
      return format.format(Math.round(seconds / unitSeconds), unit);
    }
  }
  return format.format(0, "second");
}

/** An instant as a `<input type="datetime-local">` value in the browser's timezone ("" if unparseable). */
export function toDateTimeLocal(value: string | Date): string {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A `datetime-local` value, read in the browser's timezone, as an ISO instant; null when empty or invalid. */
export function fromDateTimeLocal(value: string): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

const DURATION_UNITS: [number, string, string][] = [
  [86_400_000, "day", "days"],
  [3_600_000, "hour", "hours"],
  [60_000, "minute", "minutes"],
  [1_000, "second", "seconds"],
];

/** "30 days", "10 minutes", "1500 ms": a Kafka *.ms value in the largest unit that divides it exactly. */
export function formatDurationMs(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  for (const [size, one, many] of DURATION_UNITS) {
    if (ms >= size && ms % size === 0) {
      const count = ms / size;
      return `${count} ${count === 1 ? one : many}`;
    }
  }
  return `${ms} ms`;
}
