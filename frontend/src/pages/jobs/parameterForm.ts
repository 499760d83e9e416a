/**
 * A launch form generated from a catalog job's typed parameters. The catalog names each
 * parameter's Python type ("int", "str | None", "list[int]", "TopicRange"); a field left blank
 * is not sent, so the job's own default applies.
 */

export type FieldKind = "integer" | "number" | "text" | "boolean" | "integer-list" | "text-list" | "timestamp" | "json";

export interface ParameterField {
  /** The key in the parameters JSON; nested fields are "source.topic". */
  path: string;
  label: string;
  kind: FieldKind;
  required: boolean;
  hint?: string;
  /** A query or other long text: a text area rather than one line. */
  multiline?: boolean;
}

/** The one nested parameter type of the catalog: which records a job reads (runtime.TopicRange). */
const TOPIC_RANGE_FIELDS: readonly Omit<ParameterField, "path">[] = [
  { label: "Topic", kind: "text", required: true },
  { label: "Starting offsets", kind: "text", required: false, hint: 'earliest, latest or JSON like {"t":{"0":42}}' },
  { label: "Ending offsets", kind: "text", required: false, hint: "latest by default" },
  { label: "Starting time", kind: "timestamp", required: false, hint: "Overrides the starting offsets." },
  { label: "Ending time", kind: "timestamp", required: false, hint: "Overrides the ending offsets." },
  { label: "Fail on data loss", kind: "boolean", required: false },
];
const TOPIC_RANGE_KEYS = [
  "topic",
  "starting_offsets",
  "ending_offsets",
  "starting_timestamp",
  "ending_timestamp",
  "fail_on_data_loss",
];

/** Where a streaming job reads (streaming.StreamSource). */
const STREAM_SOURCE_FIELDS: readonly ParameterField[] = [
  { path: "topic", label: "Source topic", kind: "text", required: true },
  {
    path: "starting_offsets",
    label: "Starting offsets",
    kind: "text",
    required: false,
    hint: "earliest by default, or latest",
  },
  {
    path: "max_offsets_per_trigger",
    label: "Max records per batch",
    kind: "integer",
    required: false,
    hint: "10,000 by default",
  },
  { path: "fail_on_data_loss", label: "Fail on data loss", kind: "boolean", required: false },
];

function humanize(name: string): string {
  if (name === "sql") return "SQL";
  const words = name.replaceAll("_", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function kindOf(type: string): FieldKind {
  const bare = type.replace(/\s*\|\s*None$/, "").trim();
  if (bare === "int") return "integer";
  if (bare === "float") return "number";
  if (bare === "bool") return "boolean";
  if (bare === "str") return "text";
  if (bare === "list[int]") return "integer-list";
  if (bare === "list[str]") return "text-list";
  return "json";
}

/** The form's fields; `required` names the parameters without a default (the catalog's list). */
export function fieldsOf(parameters: Record<string, string>, required: readonly string[] = []): ParameterField[] {
  return Object.entries(parameters).flatMap(([name, type]): ParameterField[] => {
    if (type === "TopicRange") {
      return TOPIC_RANGE_FIELDS.map((field, index) => ({
        ...field,
        path: `${name}.${TOPIC_RANGE_KEYS[index]}`,
      }));
    }
    if (type === "StreamSource") {
      return STREAM_SOURCE_FIELDS.map((field) => ({ ...field, path: `${name}.${field.path}` }));
    }
    const kind = kindOf(type);
    return [
      {
        path: name,
        label: humanize(name),
        kind,
        required: required.includes(name),
        hint: kind === "json" ? `JSON (${type})` : kind.endsWith("list") ? "Comma-separated" : undefined,
        ...(name === "sql" ? { multiline: true } : {}),
      },
    ];
  });
}

type Value = string | number | boolean | null | unknown[] | Record<string, unknown>;

function parse(field: ParameterField, text: string): Value | Error {
  switch (field.kind) {
    case "integer":
    case "number": {
      const number = Number(text);
      if (!Number.isFinite(number) || (field.kind === "integer" && !Number.isInteger(number))) {
        return new Error(`${field.label} must be ${field.kind === "integer" ? "a whole number" : "a number"}.`);
      }
      return number;
    }
    case "boolean":
      return text === "true";
    case "integer-list": {
      const numbers = text.split(",").map((part) => Number(part.trim()));
      return numbers.every(Number.isInteger) ? numbers : new Error(`${field.label} must be whole numbers.`);
    }
    case "text-list":
      return text
        .split(",")
        .map((part) => part.trim())
        .filter(Boolean);
    case "timestamp": {
      const millis = new Date(text).getTime();
      return Number.isNaN(millis) ? new Error(`${field.label} is not a valid time.`) : millis;
    }
    case "json":
      try {
        return JSON.parse(text) as Value;
      } catch {
        return new Error(`${field.label} must be valid JSON.`);
      }
    default:
      return text;
  }
}

/**
 * The parameters JSON for the typed values, or the messages per field. Blank fields are left out.
 * Times are read in the browser's timezone and sent as epoch milliseconds, as the data source expects.
 */
export function buildParameters(
  fields: readonly ParameterField[],
  values: Readonly<Record<string, string>>,
): { parameters: Record<string, unknown> } | { errors: Record<string, string> } {
  const parameters: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const field of fields) {
    const text = (values[field.path] ?? "").trim();
    if (text === "") {
      if (field.required) errors[field.path] = `${field.label} is required.`;
      continue;
    }
    const value = parse(field, text);
    if (value instanceof Error) {
      errors[field.path] = value.message;
      continue;
    }
    const [head, tail] = field.path.split(".", 2) as [string, string | undefined];
    if (tail === undefined) parameters[head] = value;
    else parameters[head] = { ...(parameters[head] as Record<string, unknown> | undefined), [tail]: value };
  }
  return Object.keys(errors).length > 0 ? { errors } : { parameters };
}
