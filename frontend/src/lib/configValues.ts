/**
 * Kafka config values as people read them: `retention.ms` 86400000 is "1 day", `segment.bytes`
 * 1073741824 is "1 GiB", -1 is "unlimited". The API says each config's base unit (from Kafka's naming)
 * and its "unlimited" value; these functions convert between the raw string Kafka stores and an
 * amount in a unit an editor offers, and check a value against its type, choices and the team's rule.
 */
import type { ConfigEntry, ConfigUnit } from "../api/types";

export interface UnitOption {
  /** Shown in the unit select and in readable values ("days", "MiB"). */
  label: string;
  /** How many of the config's base unit one of this unit is. */
  factor: number;
  singular?: string;
}

const MS = 1;
const SECOND = 1000 * MS;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const DURATION_IN_MS: UnitOption[] = [
  { label: "days", singular: "day", factor: DAY },
  { label: "hours", singular: "hour", factor: HOUR },
  { label: "minutes", singular: "minute", factor: MINUTE },
  { label: "seconds", singular: "second", factor: SECOND },
  { label: "ms", factor: MS },
];

const SIZES: UnitOption[] = [
  { label: "GiB", factor: 1024 ** 3 },
  { label: "MiB", factor: 1024 ** 2 },
  { label: "KiB", factor: 1024 },
  { label: "bytes", singular: "byte", factor: 1 },
];

/** The units an editor offers for a config whose base unit is `unit`, largest first. */
export function unitOptions(unit: ConfigUnit | null | undefined): UnitOption[] {
  switch (unit) {
    case "ms":
      return DURATION_IN_MS;
    case "seconds":
      return DURATION_IN_MS.filter((each) => each.factor >= SECOND).map((each) => ({
        ...each,
        factor: each.factor / SECOND,
      }));
    case "minutes":
      return DURATION_IN_MS.filter((each) => each.factor >= MINUTE).map((each) => ({
        ...each,
        factor: each.factor / MINUTE,
      }));
    case "hours":
      return DURATION_IN_MS.filter((each) => each.factor >= HOUR).map((each) => ({
        ...each,
        factor: each.factor / HOUR,
      }));
    case "bytes":
      return SIZES;
    case "bytes_per_second":
      return SIZES.map((each) => ({ ...each, label: `${each.label}/s`, singular: undefined }));
    default:
      return [];
  }
}

/** The base unit, last of the (largest-first) options. */
export function baseUnit(options: UnitOption[]): UnitOption {
  return options[options.length - 1] ?? { label: "", factor: 1 };
}

function parseInteger(raw: string): number | null {
  if (!/^-?\d+$/.test(raw.trim())) return null;
  const value = Number(raw.trim());
  return Number.isSafeInteger(value) ? value : null;
}

/** The largest unit that holds the value a whole number of times (86400000 ms → 1 day). */
export function splitIntoUnit(
  raw: string,
  unit: ConfigUnit | null | undefined,
): { amount: string; unit: UnitOption } | null {
  const options = unitOptions(unit);
  const value = parseInteger(raw);
  if (options.length === 0 || value === null) return null;
  const exact = options.find((each) => value !== 0 && value % each.factor === 0) ?? baseUnit(options);
  return { amount: String(value / exact.factor), unit: exact };
}

function plural(amount: number, option: UnitOption): string {
  const label = amount === 1 && option.singular ? option.singular : option.label;
  return `${amount.toLocaleString("en-US", { maximumFractionDigits: 2 })} ${label}`;
}

/**
 * The value as a person reads it: "1 day", "1.5 GiB", "unlimited", or the raw value when it has no unit
 * (or is not a number). Values that do not divide evenly are rounded to two decimals of the largest unit
 * they reach.
 */
export function readableValue(raw: string | null, entry: Pick<ConfigEntry, "unit" | "unlimited">): string {
  if (raw === null) return "—";
  if (entry.unlimited !== null && raw.trim() === entry.unlimited) return "unlimited";
  const options = unitOptions(entry.unit);
  const value = parseInteger(raw);
  if (options.length === 0 || value === null) return raw;
  if (value < 0) return raw;
  if (value === 0) return plural(0, baseUnit(options));
  const exact = options.find((each) => value % each.factor === 0);
  const reached = options.find((each) => value >= each.factor) ?? baseUnit(options);
  const shown = exact && exact.factor >= reached.factor ? exact : reached;
  const amount = value / shown.factor;
  // 1048588 bytes is not quite 1 MiB: say so rather than round it silently.
  const rounded = Math.round(amount * 100) / 100;
  return `${rounded === amount ? "" : "≈ "}${plural(amount, shown)}`;
}

/** The raw value for `amount` of `option` ("1.5", hours → "5400000"), or an error sentence. */
export function toRawValue(amount: string, option: UnitOption): { raw: string } | { error: string } {
  const text = amount.trim();
  if (text === "") return { error: "Enter a value." };
  if (!/^\d+(\.\d+)?$/.test(text)) return { error: "Enter a number of at least 0." };
  const value = Math.round(Number(text) * option.factor);
  if (!Number.isSafeInteger(value)) return { error: "That is too large." };
  const exact = Number(text) * option.factor;
  if (Math.abs(value - exact) > Math.max(1e-9, exact * 1e-12)) {
    return { error: `That is not a whole number in the config's unit; use a smaller unit.` };
  }
  return { raw: String(value) };
}

const INTEGER_TYPES = new Set(["int", "short", "long"]);
const INT_RANGE: Record<string, [number, number]> = {
  int: [-(2 ** 31), 2 ** 31 - 1],
  short: [-(2 ** 15), 2 ** 15 - 1],
};

/**
 * Why `raw` cannot be saved for this config, or null: its type (integers, numbers, booleans), its
 * choices, and the team's policy (allowed at all, minimum, maximum — said in the config's unit).
 */
export function configProblem(raw: string, entry: ConfigEntry): string | null {
  const text = raw.trim();
  if (!entry.rule.allowed) return "The team's policy does not allow setting this config.";
  if (text === "") return entry.multiple ? "Pick at least one value." : "Enter a value.";
  if (entry.choices.length > 0) {
    const picked = entry.multiple ? text.split(",").map((each) => each.trim()) : [text];
    const unknown = picked.filter((each) => !entry.choices.includes(each));
    if (picked.length === 0 || picked.some((each) => each === "")) return "Pick at least one value.";
    if (unknown.length > 0) return `${unknown.join(", ")} is not one of ${entry.choices.join(", ")}.`;
    return null;
  }
  if (entry.type === "boolean" && text !== "true" && text !== "false") return "Must be true or false.";
  if (entry.type === "double" && !Number.isFinite(Number(text))) return "Must be a number.";
  if (entry.type && INTEGER_TYPES.has(entry.type)) {
    if (!/^-?\d+$/.test(text)) return "Must be a whole number.";
    const range = INT_RANGE[entry.type];
    if (range && (Number(text) < range[0] || Number(text) > range[1])) return `Must fit a Kafka ${entry.type}.`;
  }
  const isUnlimited = entry.unlimited !== null && text === entry.unlimited;
  const value = Number(text);
  const { minimum, maximum } = entry.rule;
  if (maximum !== null && (isUnlimited || value > maximum)) {
    return `At most ${readableValue(String(maximum), entry)} (the team's policy).`;
  }
  if (minimum !== null && !isUnlimited && value < minimum) {
    return `At least ${readableValue(String(minimum), entry)} (the team's policy).`;
  }
  return null;
}
