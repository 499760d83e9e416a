import { ApiError, describeError, isClusterRefusal } from "../api/errors";

export interface FormErrors {
  /** Messages to show next to the named fields. */
  fields: Record<string, string>;
  /** The message for the form as a whole, or null. */
  form: string | null;
}

function messagesOf(value: unknown): string {
  if (Array.isArray(value)) return value.map(messagesOf).join(" ");
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null) return Object.values(value).map(messagesOf).join(" ");
  return String(value);
}

/**
 * Splits a failed submission into per-field messages for the fields the form
 * shows, and one form-level message for everything else (a refusal like
 * "already exists", or an error on a field the form does not have).
 */
export function formErrorsOf(error: unknown, fieldNames: readonly string[]): FormErrors {
  if (!error) return { fields: {}, form: null };
  // The cluster's refusal: its details describe Kafka's error, not the form's fields.
  if (isClusterRefusal(error)) return { fields: {}, form: describeError(error) };
  const fields: Record<string, string> = {};
  const rest: string[] = [];
  if (error instanceof ApiError && error.status === 400) {
    for (const [name, value] of Object.entries(error.details)) {
      if (fieldNames.includes(name)) fields[name] = messagesOf(value);
      else rest.push(name === "non_field_errors" ? messagesOf(value) : `${name}: ${messagesOf(value)}`);
    }
  }
  if (Object.keys(fields).length === 0 && rest.length === 0) return { fields, form: describeError(error) };
  return { fields, form: rest.length > 0 ? rest.join(" ") : null };
}
