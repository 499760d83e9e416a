import { useId, useState, type FormEvent } from "react";

import { ApiError } from "../../api/errors";
import type { TopicDetail } from "../../api/types";
import { SelectField, TextField } from "../../components/FormFields";
import { ProgressBar } from "../../components/ProgressBar";
import { EmptyState, ErrorState, LoadingState } from "../../components/states";
import { formatBytes } from "../../lib/bytes";
import { fromDateTimeLocal, toDateTimeLocal } from "../../lib/time";
import { useUrlFilters } from "../../lib/useUrlFilters";
import { download, messagesAsCsv, messagesAsJson } from "./exportMessages";
import { MessageTable } from "./MessageTable";
import { partitionChoices } from "./partitionChoices";
import { useMessageScan, type BrowseQuery, type ScanState } from "./useMessageScan";
import "./messages.css";

const DEFAULT_LIMIT = 50;
const STARTS = [
  ["newest", "Newest"],
  ["earliest", "Oldest"],
  ["offset", "Offset"],
  ["timestamp", "Timestamp"],
] as const;
type Start = (typeof STARTS)[number][0];

const PARAMS = ["partition", "start", "offset", "ts", "limit", "key", "value", "header", "filter", "live"] as const;
type BrowseParams = Record<(typeof PARAMS)[number], string>;

const FILTER_HELP =
  'CEL over partition, offset, timestamp, size, key, value (decoded), keyText, valueText, headers — e.g. value.amount > 100 && headers["source"] == "web"';

function startOf(value: string): Start {
  return STARTS.some(([start]) => start === value) ? (value as Start) : "newest";
}

/** The API query for the URL's params, or a reason why it cannot be asked yet. */
export function browseQuery(params: BrowseParams): BrowseQuery | string {
  const live = params.live === "1";
  const start = live ? "newest" : startOf(params.start);
  const query: BrowseQuery = { start, limit: Number(params.limit) || DEFAULT_LIMIT };
  if (params.partition !== "") query.partition = Number(params.partition);
  if (params.key) query.key_contains = params.key;
  if (params.value) query.value_contains = params.value;
  if (params.header) query.header_key = params.header;
  if (params.filter.trim()) query.filter = params.filter.trim();
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

const count = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });
const exact = new Intl.NumberFormat("en-US");

function compact(value: number): string {
  return value < 1_000_000 ? exact.format(value) : count.format(value);
}

const STOPPED: Record<string, string> = {
  limit: "stopped at the limit",
  end: "reached the end of the range",
  byte_cap: "stopped at the scan's byte cap",
};

/** "Scanned 120,000 of 2.3M · 14 matches", a bar, and Stop while it runs. */
function ScanStatusBar({ scan, filtering }: { scan: ScanState & { stop: () => void }; filtering: boolean }) {
  const { progress, status } = scan;
  if (status === "live") {
    return (
      <div className="scan-status" role="status">
        <span>
          <span className="badge badge--live">Live</span>{" "}
          {scan.lag === null || scan.lag === 0
            ? "Following the log end: new records appear as they are written."
            : `${exact.format(scan.lag)} ${scan.lag === 1 ? "record" : "records"} behind the log end, catching up…`}
          <span className="muted"> · {exact.format(scan.messages.length)} shown</span>
        </span>
      </div>
    );
  }
  if (!progress || !filtering) return null;
  const total = progress.scanned + progress.remaining;
  const percent = total > 0 ? (100 * progress.scanned) / total : 100;
  const summary = `Scanned ${compact(progress.scanned)} of ${compact(total)} · ${exact.format(progress.matched)} ${
    progress.matched === 1 ? "match" : "matches"
  } · ${formatBytes(progress.bytes_scanned)}`;
  return (
    <div className="scan-status" role="status">
      <span>
        {summary}
        {status === "scanning" ? "…" : ""}
        {status === "done" && progress.stopped_because ? ` — ${STOPPED[progress.stopped_because] ?? ""}` : ""}
        {status === "stopped" ? " — stopped" : ""}
      </span>
      {status === "scanning" ? <ProgressBar percent={percent} label="Scan progress" valueText={summary} /> : null}
    </div>
  );
}

function FilterErrorNote({ scan }: { scan: ScanState }) {
  if (scan.filterErrors === 0) return null;
  return (
    <p className="field__hint scan-warning" role="note">
      The filter failed on {exact.format(scan.filterErrors)} records (they do not match): {scan.firstFilterError}
    </p>
  );
}

function describeFilterError(error: unknown): string | null {
  if (!(error instanceof ApiError) || (!error.code.startsWith("filter") && error.code !== "invalid_filter"))
    return null;
  const { line, column } = error.details as { line?: number; column?: number };
  return line ? `${error.message} (line ${line}, column ${column})` : error.message;
}

/**
 * Reads records of one topic: the newest across partitions, the oldest, from
 * an offset or a time, filtered with plain text matches or a CEL expression
 * that the server evaluates while it scans (with progress). Live tail follows
 * the log end. Everything is in the URL, so a view can be shared.
 */
export function MessageBrowser({ topic }: { topic: TopicDetail }) {
  const [params, setParams] = useUrlFilters(PARAMS);
  const live = params.live === "1";
  const query = browseQuery(params);
  const scan = useMessageScan(topic.id, typeof query === "string" ? null : query, live);
  const partitionCount = topic.live.partitions.length || topic.partitions;
  const filtering =
    typeof query !== "string" &&
    Boolean(query.filter || query.key_contains || query.value_contains || query.header_key);
  const newestFirst = live || (typeof query !== "string" && query.start === "newest");
  const filterError = scan.status === "error" ? describeFilterError(scan.error) : null;
  const fileName = `${topic.name}-${new Date().toISOString().replace(/[:.]/g, "-")}`;

  return (
    <section className="section" aria-labelledby="messages-heading">
      <div className="page-header">
        <h2 id="messages-heading" className="section__title">
          Messages
        </h2>
        <div className="button-row">
          <button
            type="button"
            className="button"
            disabled={scan.messages.length === 0}
            onClick={() => download(`${fileName}.json`, "application/json", messagesAsJson(scan.messages))}
          >
            Download JSON
          </button>
          <button
            type="button"
            className="button"
            disabled={scan.messages.length === 0}
            onClick={() => download(`${fileName}.csv`, "text/csv", messagesAsCsv(scan.messages))}
          >
            Download CSV
          </button>
          <button
            type="button"
            className={live ? "button" : "button button--primary"}
            aria-pressed={live}
            onClick={() => setParams({ live: live ? "" : "1" })}
          >
            {live ? "Pause" : "Live tail"}
          </button>
        </div>
      </div>
      <BrowseForm
        key={PARAMS.map((name) => params[name]).join("|")}
        params={params}
        partitionCount={partitionCount}
        live={live}
        scanning={scan.status === "scanning"}
        filterError={filterError}
        onStop={scan.stop}
        onApply={(changes) => {
          setParams(changes);
          // Browse always reads: the same query may find records written since (by anyone).
          scan.retry();
        }}
      />
      <ScanStatusBar scan={scan} filtering={filtering} />
      <FilterErrorNote scan={scan} />
      {typeof query === "string" ? (
        <EmptyState title="Nothing to read yet" description={query} />
      ) : scan.status === "error" && !filterError ? (
        <ErrorState error={scan.error} title="Could not read messages" onRetry={scan.retry} />
      ) : scan.status === "loading" ? (
        <LoadingState label="Reading messages…" />
      ) : scan.messages.length === 0 ? (
        scan.status === "scanning" ? null : scan.status === "live" ? (
          <EmptyState title="Waiting for records" description="Nothing new yet: records written now show here." />
        ) : filterError ? null : (
          <EmptyState title="No messages" description="Nothing matches here. Try another start or fewer filters." />
        )
      ) : (
        <MessageTable messages={scan.messages} newestFirst={newestFirst} />
      )}
    </section>
  );
}

interface BrowseFormProps {
  params: BrowseParams;
  partitionCount: number;
  live: boolean;
  scanning: boolean;
  filterError: string | null;
  onStop: () => void;
  onApply: (changes: Partial<BrowseParams>) => void;
}

function BrowseForm({ params, partitionCount, live, scanning, filterError, onStop, onApply }: BrowseFormProps) {
  const ids = {
    offset: useId(),
    ts: useId(),
    limit: useId(),
    filter: useId(),
    filterHelp: useId(),
    filterError: useId(),
  };
  const [draft, setDraft] = useState<BrowseParams>({ ...params, start: startOf(params.start) });
  const set = (name: keyof BrowseParams) => (value: string) => setDraft((current) => ({ ...current, [name]: value }));

  function submit(event: FormEvent) {
    event.preventDefault();
    onApply({ ...draft, start: draft.start === "newest" ? "" : draft.start, live: params.live });
  }

  return (
    <form className="browse-form" onSubmit={submit} aria-label="Browse messages">
      <div className="inline-form filters">
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
        <div className="field field--narrow">
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
      </div>
      <div className="browse-form__filter">
        <div className="field browse-form__expression">
          <label htmlFor={ids.filter} className="field__label">
            Filter (CEL)
          </label>
          <textarea
            id={ids.filter}
            className="input mono"
            rows={2}
            spellCheck={false}
            placeholder='value.amount > 100 && key.startsWith("order-")'
            aria-describedby={filterError ? `${ids.filterError} ${ids.filterHelp}` : ids.filterHelp}
            aria-invalid={filterError ? true : undefined}
            value={draft.filter}
            onChange={(event) => set("filter")(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) submit(event);
            }}
          />
          {filterError ? (
            <p id={ids.filterError} className="field__error" role="alert">
              {filterError}
            </p>
          ) : null}
          <p id={ids.filterHelp} className="field__hint">
            {FILTER_HELP}
          </p>
        </div>
        <div className="browse-form__actions">
          <button type="submit" className="button button--primary">
            Browse
          </button>
          {scanning ? (
            <button type="button" className="button" onClick={onStop}>
              Stop scan
            </button>
          ) : null}
        </div>
      </div>
    </form>
  );
}
