import { ApiError, describeError } from "../../api/errors";

/** `key=value` lines (blank lines and `#` comments skipped) as a config map. */
export function parseProperties(text: string): Record<string, string> {
  const properties: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith("#")) continue;
    const equals = trimmed.indexOf("=");
    if (equals <= 0) continue;
    properties[trimmed.slice(0, equals).trim()] = trimmed.slice(equals + 1).trim();
  }
  return properties;
}

export interface ConnectorErrors {
  /** Connect's (or the control plane's) messages per config key. */
  fields: Record<string, string>;
  form: string | null;
}

/** The refusal of a connector: `error.details.fields` holds the messages per config key. */
export function connectorErrorsOf(error: unknown): ConnectorErrors {
  if (!error) return { fields: {}, form: null };
  const fields: Record<string, string> = {};
  if (error instanceof ApiError && typeof error.details.fields === "object" && error.details.fields !== null) {
    for (const [key, messages] of Object.entries(error.details.fields as Record<string, unknown>)) {
      fields[key] = Array.isArray(messages) ? messages.join(" ") : String(messages);
    }
  }
  return { fields, form: describeError(error) };
}
