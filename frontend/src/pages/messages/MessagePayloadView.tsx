import type { MessagePayload } from "../../api/types";

/** What the API adds to a key or value framed with a schema registry id (absent otherwise). */
export type DecodedPayload = NonNullable<MessagePayload["decoded"]>;

const FORMAT_LABELS: Record<string, string> = { AVRO: "Avro", JSON: "JSON Schema", PROTOBUF: "Protobuf" };

/** The payload parsed as JSON when it is a JSON object or array, else null. */
export function prettyJson(text: string | null | undefined): string | null {
  if (!text) return null;
  const trimmed = text.trimStart();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return null;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return null;
  }
}

/** "Avro"; an id the registry does not know has no format. */
export function formatLabel(format: DecodedPayload["format"]): string {
  return format ? (FORMAT_LABELS[format] ?? format) : "unknown schema";
}

/** A key or value: text as text, JSON pretty-printed and collapsible, binary shown as base64, null as null. */
export function MessagePayloadView({ label, payload }: { label: string; payload: MessagePayload }) {
  const decoded = payload.decoded ?? null;
  if (payload.encoding === "null" || payload.data == null) {
    return (
      <div className="payload">
        <span className="payload__label">{label}</span> <span className="muted">null</span>
      </div>
    );
  }
  const json = payload.encoding === "utf-8" ? prettyJson(payload.data) : null;
  return (
    <div className="payload">
      {decoded ? (
        <details className="payload__decoded" open>
          <summary>
            {label}: Decoded ({formatLabel(decoded.format)}, id {decoded.schema_id})
            {decoded.subject ? ` · ${decoded.subject}${decoded.version ? ` v${decoded.version}` : ""}` : ""}
            {decoded.message_type ? ` · ${decoded.message_type}` : ""}
          </summary>
          {decoded.error ? (
            <p className="form-error">{decoded.error}</p>
          ) : (
            <pre className="code-block" aria-label={`Decoded ${label.toLowerCase()}`}>
              {JSON.stringify(decoded.value, null, 2)}
            </pre>
          )}
        </details>
      ) : null}
      {json !== null ? (
        <details className="payload__json" open={!decoded}>
          <summary>{label} (JSON)</summary>
          <pre className="code-block" aria-label={`${label} as JSON`}>
            {json}
          </pre>
        </details>
      ) : (
        <div>
          <span className="payload__label">{label}</span>{" "}
          {payload.encoding === "base64" ? (
            <span className="badge" title="Not valid UTF-8: shown as base64">
              base64
            </span>
          ) : null}{" "}
          <span className="mono payload__text">{payload.data}</span>
        </div>
      )}
    </div>
  );
}
