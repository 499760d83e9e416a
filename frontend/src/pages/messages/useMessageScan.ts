import { useCallback, useEffect, useRef, useState } from "react";

import { apiClient, unwrap } from "../../api/client";
import { useMessagesVersion } from "../../api/hooks/topics";
import type { BrowseResult, MessageQuery, ScanProgress, TopicMessage } from "../../api/types";

export type BrowseQuery = Pick<
  MessageQuery,
  "start" | "partition" | "offset" | "timestamp" | "limit" | "key_contains" | "value_contains" | "header_key" | "filter"
>;

/** Seconds a live tail's request waits for new records before answering empty. */
export const TAIL_WAIT_SECONDS = 2;
/** A tail poll that came back empty sooner than this waits the rest before asking again. */
const TAIL_MIN_POLL_MS = 1000;
/** Rows a live tail keeps: the newest ones. */
export const LIVE_ROWS = 1000;

export type ScanStatus = "loading" | "scanning" | "done" | "live" | "stopped" | "error";

export interface ScanState {
  status: ScanStatus;
  messages: TopicMessage[];
  progress: ScanProgress | null;
  /** Live tail: records in the log after what was shown. */
  lag: number | null;
  /** Records the filter failed on so far, and the first failure. */
  filterErrors: number;
  firstFilterError: string | null;
  error: unknown;
}

const INITIAL: ScanState = {
  status: "loading",
  messages: [],
  progress: null,
  lag: null,
  filterErrors: 0,
  firstFilterError: null,
  error: null,
};

/** The browser's order: time, then partition and offset. */
export function compareMessages(a: TopicMessage, b: TopicMessage): number {
  return Date.parse(a.timestamp) - Date.parse(b.timestamp) || a.partition - b.partition || a.offset - b.offset;
}

/**
 * Adds one answer's records. Newest scans keep the newest `limit` (each answer
 * of a backward scan holds its window's newest matches); a tail keeps the
 * newest LIVE_ROWS; forward scans stop at the limit anyway.
 */
export function mergeAnswer(
  current: TopicMessage[],
  incoming: TopicMessage[],
  mode: "newest" | "forward" | "live",
  limit: number,
): TopicMessage[] {
  if (incoming.length === 0) return current;
  const all = [...current, ...incoming].sort(compareMessages);
  if (mode === "newest") return all.slice(-limit);
  if (mode === "live") return all.slice(-LIVE_ROWS);
  return all.slice(0, limit);
}

async function browseOnce(topicId: number, query: Record<string, unknown>, signal: AbortSignal): Promise<BrowseResult> {
  return unwrap(
    await apiClient.GET("/api/v1/topics/{id}/messages/", {
      params: { path: { id: topicId }, query: query as MessageQuery },
      signal,
    }),
  );
}

/**
 * Runs one browse: a single request for the newest or oldest records, a scan
 * that follows the server's cursor (about a second of reading per request)
 * until the limit is reached or the range ends, or a live tail that long-polls
 * with its cursor until stopped. Changing the query (its JSON) starts over;
 * the previous requests are aborted. So does a change of the topic's records
 * from the console (a produce, a purge), except in a live tail, which shows
 * new records anyway.
 */
export function useMessageScan(topicId: number, query: BrowseQuery | null, live: boolean) {
  const [state, setState] = useState<ScanState>(INITIAL);
  const [attempt, setAttempt] = useState(0);
  const controller = useRef<AbortController | null>(null);
  const key = query === null ? "" : JSON.stringify(query);
  const version = useMessagesVersion(topicId);
  const recordsChanged = live ? 0 : version;

  const stop = useCallback(() => {
    controller.current?.abort();
    setState((current) =>
      current.status === "scanning" || current.status === "live" ? { ...current, status: "stopped" } : current,
    );
  }, []);

  useEffect(() => {
    if (query === null) return undefined;
    const abort = new AbortController();
    controller.current = abort;
    const limit = query.limit ?? 50;
    const mode = live ? "live" : query.start === "newest" || query.start === undefined ? "newest" : "forward";
    setState(INITIAL);

    async function run() {
      let cursor: string | null = null;
      let first = true;
      while (!abort.signal.aborted) {
        const params: Record<string, unknown> = { ...query };
        if (live) params.live = true;
        if (cursor) params.cursor = cursor;
        if (live && !first) params.wait = TAIL_WAIT_SECONDS;
        const asked = Date.now();
        const answer = await browseOnce(topicId, params, abort.signal);
        if (abort.signal.aborted) return;
        cursor = answer.cursor;
        first = false;
        const next: ScanStatus = cursor === null ? "done" : live ? "live" : "scanning";
        setState((current) => ({
          status: next,
          messages: mergeAnswer(current.messages, answer.messages, mode, limit),
          progress: answer.progress ?? current.progress,
          lag: answer.lag,
          filterErrors: current.filterErrors + (answer.progress?.filter_errors ?? 0),
          firstFilterError: current.firstFilterError ?? answer.progress?.first_filter_error ?? null,
          error: null,
        }));
        if (cursor === null) return;
        // A server that answers an empty tail at once (a short wait) is not asked in a tight loop.
        const early = TAIL_MIN_POLL_MS - (Date.now() - asked);
        if (live && answer.messages.length === 0 && early > 0) {
          await new Promise((resolve) => setTimeout(resolve, early));
        }
      }
    }

    run().catch((error: unknown) => {
      if (abort.signal.aborted) return;
      setState((current) => ({ ...current, status: "error", error }));
    });
    return () => abort.abort();
    // The key stands for the query's content: a new object with the same content is the same browse.
  }, [topicId, key, live, attempt, recordsChanged]);

  /** Runs the same browse again: after a failure, or when asked to browse with an unchanged query. */
  const retry = useCallback(() => setAttempt((current) => current + 1), []);
  return { ...state, stop, retry };
}
