import type { MessagePayload, TopicMessage } from "../../api/types";

/** A payload as one line of text: the registry's decoding as JSON, else the text (or base64), else "". */
export function payloadText(payload: MessagePayload): string {
  const decoded = payload.decoded;
  if (decoded && decoded.error === null) return JSON.stringify(decoded.value);
  return payload.data ?? "";
}

/** A record as plain JSON: decoded values where the registry decoded them, headers as an object list. */
export function messageAsJson(message: TopicMessage) {
  const value = (payload: MessagePayload) =>
    payload.decoded && payload.decoded.error === null ? payload.decoded.value : payload.data;
  return {
    partition: message.partition,
    offset: message.offset,
    timestamp: message.timestamp,
    size: message.size,
    key: value(message.key),
    value: value(message.value),
    encoding: { key: message.key.encoding, value: message.value.encoding },
    headers: message.headers.map((header) => ({ key: header.key, value: header.value.data })),
  };
}

export function messagesAsJson(messages: TopicMessage[]): string {
  return JSON.stringify(messages.map(messageAsJson), null, 2);
}

function csvField(text: string): string {
  // Quoted when needed; a leading formula character is defused so a spreadsheet does not run it.
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function messagesAsCsv(messages: TopicMessage[]): string {
  const rows = [["partition", "offset", "timestamp", "key", "value", "headers", "size"]];
  for (const message of messages) {
    rows.push([
      String(message.partition),
      String(message.offset),
      message.timestamp,
      payloadText(message.key),
      payloadText(message.value),
      JSON.stringify(Object.fromEntries(message.headers.map((header) => [header.key, header.value.data]))),
      String(message.size),
    ]);
  }
  return rows.map((row) => row.map(csvField).join(",")).join("\r\n") + "\r\n";
}

/** Saves text as a file through a temporary link (no server round trip). */
export function download(filename: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}
