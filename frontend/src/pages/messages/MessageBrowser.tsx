import { useId, useState, type FormEvent } from "react";

import { useTopicMessages, type BrowseQuery } from "../../api/hooks/topics";
import type { TopicDetail, TopicMessage } from "../../api/types";
import { SelectField, TextField } from "../../components/FormFields";
import { Timestamp } from "../../components/Timestamp";
import { EmptyState, ErrorState, LoadingState } from "../../components/states";
import { fromDateTimeLocal, toDateTimeLocal } from "../../lib/time";
import { useUrlFilters } from "../../lib/useUrlFilters";
import { MessagePayloadView } from "./MessagePayloadView";
import { partitionChoices } from "./partitionChoices";

/** How often live tail asks for the newest records. */
export const LIVE_TAIL_MS = 2000;
const DEFAULT_LIMIT = 50;
const STARTS = [
  ["newest", "Newest"],
  ["earliest", "Earliest"],
  ["offset", "Offset"],
  ["timestamp", "Timestamp"],
] as const;
type Start = (typeof STARTS)[number][0];

const PARAMS = ["partition", "start", "offset", "ts", "limit", "key", "value", "header", "live"] as const;
type BrowseParams = Record<(typeof PARAMS)[number], string>;

function startOf(value: string): Start {
  return STARTS.some(([start]) => start === value) ? (value as Start) : "newest";
}

/** The API query for the URL's params, or a reason why it cannot be asked yet. */
function browseQuery(params: BrowseParams): BrowseQuery | string {
  const live = params.live === "1";
  const start = live ? "newest" : startOf(params.start);
  const query: BrowseQuery = { start, limit: Number(params.limit) || DEFAULT_LIMIT };
  if (params.partition !== "") query.partition = Number(params.partition);
  if (params.key) query.key_contains = params.key;
  if (params.value) query.value_contains = params.value;
  if (params.header) query.header_key = params.header;
  if (start === "offset") {
    if (params.partition === "" || params.offset === "") return "Choose a partition and an offset to start from.";
    query.offset = Number(params.offset);
  }
  if (start === "timestamp") {
    if (!params.ts) return "Choose the time to start from.";
    query.timestamp = params.ts;
  }
  return query;
}

/**
 * Reads records of one topic: from the start, the newest, an offset or a
 * time, filtered on key, value or header. Everything is in the URL, so a
 * view of particular records can be shared. Live tail re-reads the newest
 * records every two seconds until paused.
 */
export function MessageBrowser({ topic }: { topic: TopicDetail }) {
  const [params, setParams] = useUrlFilters(PARAMS);
  const live = params.live === "1";
  const query = browseQuery(params);
  const messages = useTopicMessages(topic.id, typeof query === "string" ? { start: "newest" } : query, {
    enabled: typeof query !== "string",
    refetchInterval: live ? LIVE_TAIL_MS : false,
  });
  const partitionCount = topic.live.partitions.length || topic.partitions;

  return (
    <section className="section" aria-labelledby="messages-heading">
      <div className="page-header">
        <h2 id="messages-heading" className="section__title">
          Messages
        </h2>
        <button
          type="button"
          className={live ? "button" : "button button--primary"}
          aria-pressed={live}
          onClick={() => setParams({ live: live ? "" : "1" })}
        >
          {live ? "Pause" : "Live tail"}
        </button>
      </div>
      <BrowseForm
        key={PARAMS.map((name) => params[name]).join("|")}
        params={params}
        partitionCount={partitionCount}
        live={live}
        onApply={(changes) => setParams(changes)}
      />
      {live ? (
        <p className="muted" role="status">
          Live: showing the newest records, refreshed every {LIVE_TAIL_MS / 1000} s.
        </p>
      ) : null}
      {typeof query === "string" ? (
        <EmptyState title="Nothing to read yet" description={query} />
      ) : messages.isPending ? (
        <LoadingState label="Reading messages…" />
      ) : messages.isError ? (
        <ErrorState error={messages.error} title="Could not read messages" onRetry={() => void messages.refetch()} />
      ) : messages.data.length === 0 ? (
        <EmptyState title="No messages" description="Nothing matches here. Try another start or fewer filters." />
      ) : (
        <MessageList messages={messages.data} />
      )}
    </section>
  );
}

interface BrowseFormProps {
  params: BrowseParams;
  partitionCount: number;
  live: boolean;
  onApply: (changes: Partial<BrowseParams>) => void;
}

function BrowseForm({ params, partitionCount, live, onApply }: BrowseFormProps) {
  const ids = { offset: useId(), ts: useId(), limit: useId() };
  const [draft, setDraft] = useState<BrowseParams>({ ...params, start: startOf(params.start) });
  const set = (name: keyof BrowseParams) => (value: string) => setDraft((current) => ({ ...current, [name]: value }));

  function submit(event: FormEvent) {
    event.preventDefault();
    onApply({ ...draft, start: draft.start === "newest" ? "" : draft.start, limit: draft.limit, live: params.live });
  }

  return (
    <form className="inline-form filters" onSubmit={submit} aria-label="Browse messages">
      <SelectField
        label="Partition"
        value={draft.partition}
        choices={partitionChoices(partitionCount)}
        emptyLabel="All partitions"
        onChange={(partition) => setDraft((current) => ({ ...current, partition }))}
      />
      <SelectField
        label="Start from"
        value={startOf(draft.start)}
        choices={STARTS}
        disabled={live}
        onChange={(start) => setDraft((current) => ({ ...current, start }))}
      />
      {draft.start === "offset" ? (
        <div className="field">
          <label htmlFor={ids.offset} className="field__label">
            Offset
          </label>
          <input
            id={ids.offset}
            className="input"
            type="number"
            min={0}
            value={draft.offset}
            onChange={(event) => set("offset")(event.target.value)}
          />
        </div>
      ) : null}
      {draft.start === "timestamp" ? (
        <div className="field">
          <label htmlFor={ids.ts} className="field__label">
            From time
          </label>
          <input
            id={ids.ts}
            className="input"
            type="datetime-local"
            value={draft.ts ? toDateTimeLocal(draft.ts) : ""}
            onChange={(event) =>
              setDraft((current) => ({ ...current, ts: fromDateTimeLocal(event.target.value) ?? "" }))
            }
          />
        </div>
      ) : null}
      <div className="field">
        <label htmlFor={ids.limit} className="field__label">
          Limit
        </label>
        <input
          id={ids.limit}
          className="input"
          type="number"
          min={1}
          max={500}
          placeholder={String(DEFAULT_LIMIT)}
          value={draft.limit}
          onChange={(event) => set("limit")(event.target.value)}
        />
      </div>
      <TextField label="Key contains" mono={false} value={draft.key} onChange={set("key")} />
      <TextField label="Value contains" mono={false} value={draft.value} onChange={set("value")} />
      <TextField label="Header key" mono={false} value={draft.header} onChange={set("header")} />
      <div className="field">
        <button type="submit" className="button button--primary">
          Browse
        </button>
      </div>
    </form>
  );
}

function MessageList({ messages }: { messages: TopicMessage[] }) {
  return (
    <ol className="messages" aria-label="Messages">
      {messages.map((message) => (
        <li key={`${message.partition}-${message.offset}`} className="message">
          <div className="message__meta">
            <span className="badge">partition {message.partition}</span>
            <span className="mono">offset {message.offset}</span>
            <Timestamp value={message.timestamp} />
          </div>
          <MessagePayloadView label="Key" payload={message.key} />
          <MessagePayloadView label="Value" payload={message.value} />
          {message.headers.length > 0 ? (
            <dl className="message__headers" aria-label="Headers">
              {message.headers.map((header, index) => (
                <div key={index}>
                  <dt className="mono">{header.key}</dt>
                  <dd className="mono">
                    {header.value.encoding === "null" ? (
                      <span className="muted">null</span>
                    ) : (
                      <>
                        {header.value.encoding === "base64" ? <span className="badge">base64</span> : null}{" "}
                        {header.value.data}
                      </>
                    )}
                  </dd>
                </div>
              ))}
            </dl>
          ) : null}
        </li>
      ))}
    </ol>
  );
}
