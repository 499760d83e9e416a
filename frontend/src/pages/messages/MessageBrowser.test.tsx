import { configure, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, requestsOf, stubFetch, type StubbedResponse } from "../../test/fetchStub";
import { renderPage } from "../../test/renderPage";
import { query } from "../../test/tenancyFixtures";
import { browseResult, message, scanProgress, topicDetail } from "../../test/topicFixtures";
import { messagesAsCsv } from "./exportMessages";
import { MessageBrowser } from "./MessageBrowser";
import { LIVE_ROWS, mergeAnswer } from "./useMessageScan";

// The machine running the suite is shared and slow at times.
configure({ asyncUtilTimeout: 10_000 });

const MESSAGES = "GET /api/v1/topics/30/messages/";

function renderBrowser(answer: Parameters<typeof stubFetch>[0][string], search = "") {
  const fetchSpy = stubFetch({ [MESSAGES]: answer });
  const rendered = renderPage(
    <MessageBrowser topic={topicDetail()} />,
    "/topics/:id/messages",
    `/topics/30/messages${search}`,
  );
  return { fetchSpy, ...rendered };
}

const browseRequests = (spy: ReturnType<typeof stubFetch>) =>
  requestsOf(spy).filter((request) => request.url.includes("/messages/"));

/** Answers in turn, the last one again for any further request. */
function inTurn(...answers: StubbedResponse[]) {
  let index = 0;
  return () => answers[Math.min(index++, answers.length - 1)]!;
}

describe("MessageBrowser", { timeout: 30_000 }, () => {
  it("lists each record as a table row, and a row opens to its key, value and headers", async () => {
    const { user } = renderBrowser(
      json(
        200,
        browseResult({
          messages: [
            message({ partition: 1, offset: 3, size: 2048, key: { data: "refund-9", encoding: "utf-8" } }),
            message({
              partition: 0,
              offset: 6,
              key: { data: null, encoding: "null" },
              value: { data: "plain text", encoding: "utf-8" },
              headers: [{ key: "trace", value: { data: "3q2+7w==", encoding: "base64" } }],
            }),
          ],
        }),
      ),
    );

    const table = await screen.findByRole("table", { name: "Messages" });
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows).toHaveLength(2);
    // Newest first: the later record (same time, higher partition) on top.
    expect(rows[0]).toHaveTextContent(/^▸1\s*3/);
    expect(rows[0]).toHaveTextContent("refund-9");
    expect(rows[0]).toHaveTextContent('{"id":"order-1","amount":12}');
    expect(rows[0]).toHaveTextContent("2.0 KiB");
    expect(rows[1]).toHaveTextContent("plain text");
    expect(rows[1]).toHaveTextContent("null");

    await user.click(screen.getByRole("button", { name: "Details of partition 1 offset 3" }));
    expect(screen.getByRole("button", { name: "Details of partition 1 offset 3" })).toHaveAttribute(
      "aria-expanded",
      "true",
    );
    expect(screen.getByLabelText("Value as JSON").textContent).toContain('"amount": 12');
    expect(screen.getByRole("definition")).toHaveTextContent("web");
    expect(screen.getByRole("button", { name: "Copy as JSON" })).toBeInTheDocument();
  });

  it("marks decoded payloads with their format and ids the registry does not know", async () => {
    const { user } = renderBrowser(
      json(
        200,
        browseResult({
          messages: [
            message({
              offset: 1,
              value: {
                data: "AAAAAAcCBG8tMQ==",
                encoding: "base64",
                decoded: {
                  schema_id: 7,
                  subject: "payments.orders-value",
                  version: 4,
                  format: "PROTOBUF",
                  message_type: "acme.Order",
                  value: { id: "o-1", lines: [{ sku: "tea", quantity: 2 }] },
                  error: null,
                },
              },
            }),
            message({
              offset: 2,
              value: {
                data: "AAAAA+c=",
                encoding: "base64",
                decoded: {
                  schema_id: 999,
                  subject: null,
                  version: null,
                  format: null,
                  message_type: null,
                  value: null,
                  error: "Schema 999 not found",
                },
              },
            }),
          ],
        }),
      ),
    );

    const table = await screen.findByRole("table", { name: "Messages" });
    expect(within(table).getByText("schema id not found")).toBeInTheDocument();
    expect(within(table).getByText("Protobuf")).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Details of partition 0 offset 1" }));
    const decoded = screen.getByLabelText("Decoded value");
    expect(JSON.parse(decoded.textContent ?? "")).toEqual({ id: "o-1", lines: [{ sku: "tea", quantity: 2 }] });
    expect(
      screen.getByText("Value: Decoded (Protobuf, id 7) · payments.orders-value v4 · acme.Order"),
    ).toBeInTheDocument();
  });

  it("says an empty partition has no messages, after asking for that partition", async () => {
    const { fetchSpy } = renderBrowser(json(200, browseResult()), "?partition=1&start=earliest");

    expect(await screen.findByText("No messages")).toBeInTheDocument();
    expect(screen.queryByRole("table", { name: "Messages" })).not.toBeInTheDocument();
    const sent = query(browseRequests(fetchSpy)[0]!);
    expect(sent.get("partition")).toBe("1");
    expect(sent.get("start")).toBe("earliest");
    expect(screen.getByLabelText("Partition")).toHaveValue("1");
  });

  it("shows a failed read with the reason and reads again on retry", async () => {
    let failing = true;
    const { fetchSpy, user } = renderBrowser(() =>
      failing
        ? json(503, { error: { code: "cluster_unavailable", message: "The cluster did not answer." } })
        : json(200, browseResult({ messages: [message({ offset: 11 })] })),
    );

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not read messages");
    expect(alert).toHaveTextContent("The cluster did not answer.");
    failing = false;
    await user.click(within(alert).getByRole("button", { name: "Try again" }));

    expect(await screen.findByRole("button", { name: "Details of partition 0 offset 11" })).toBeInTheDocument();
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
    expect(browseRequests(fetchSpy)).toHaveLength(2);
  });

  it("shows its loading state while the read is under way", async () => {
    renderBrowser(() => new Promise<StubbedResponse>(() => {}));
    expect(await screen.findByRole("status")).toHaveTextContent("Reading messages…");
  });

  it("runs a CEL filter as a scan that follows the cursor and shows its progress", async () => {
    const scanStep = [
      json(
        200,
        browseResult({
          messages: [message({ offset: 40 })],
          cursor: "c1",
          progress: scanProgress({ scanned: 120_000, remaining: 2_180_000, matched: 1, bytes_scanned: 5_000_000 }),
        }),
      ),
      json(
        200,
        browseResult({
          messages: [message({ offset: 90 })],
          cursor: null,
          progress: scanProgress({
            scanned: 2_300_000,
            matched: 2,
            bytes_scanned: 90_000_000,
            done: true,
            stopped_because: "end",
          }),
        }),
      ),
    ];
    const answers = (request: Request) => {
      const sent = new URL(request.url).searchParams;
      if (!sent.get("filter")) return json(200, browseResult({ messages: [message({ offset: 1 })] }));
      return scanStep[sent.get("cursor") === "c1" ? 1 : 0]!;
    };
    const { fetchSpy, user } = renderBrowser(answers, "?start=earliest");
    await screen.findByRole("table", { name: "Messages" });

    await user.type(screen.getByLabelText("Filter (CEL)"), "value.amount > 10");
    await user.click(screen.getByRole("button", { name: "Browse" }));

    expect(await screen.findByText(/Scanned 2\.3M of 2\.3M · 2 matches/)).toHaveTextContent("reached the end");
    const requests = browseRequests(fetchSpy).map(query);
    const scan = requests.slice(-2);
    expect(scan[0]!.get("filter")).toBe("value.amount > 10");
    expect(scan[0]!.get("cursor")).toBeNull();
    expect(scan[1]!.get("cursor")).toBe("c1");
    expect(scan[1]!.get("filter")).toBe("value.amount > 10");
    expect(screen.getByRole("button", { name: "Details of partition 0 offset 90" })).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Details of partition 0 offset 40" })).toBeInTheDocument();
  });

  it("shows a filter the server refuses under the editor, with the position", async () => {
    renderBrowser(
      json(400, {
        error: {
          code: "invalid_filter",
          message: "The filter is not valid CEL: Syntax error: mismatched input '<EOF>'",
          details: { line: 1, column: 15 },
        },
      }),
      "?start=earliest&filter=value.amount%20%3E",
    );

    const error = await screen.findByText(/not valid CEL/);
    expect(error).toHaveTextContent("(line 1, column 15)");
    expect(screen.getByLabelText("Filter (CEL)")).toHaveAttribute("aria-invalid", "true");
    expect(screen.getByLabelText("Filter (CEL)")).toHaveValue("value.amount >");
  });

  it("tails live: polls with the cursor and a wait, adds new records and shows the lag", async () => {
    const answers = inTurn(
      json(200, browseResult({ messages: [message({ offset: 1 })], cursor: "t1", lag: 0 })),
      json(
        200,
        browseResult({
          messages: [message({ offset: 2, timestamp: "2026-01-05T10:00:01Z" })],
          cursor: "t2",
          lag: 3,
        }),
      ),
      json(200, browseResult({ messages: [], cursor: "t2", lag: 3 })),
    );
    const { fetchSpy } = renderBrowser(answers, "?live=1");

    expect(await screen.findByText("3 records behind the log end, catching up…")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Details of partition 0 offset 2" })).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Pause" })).toHaveAttribute("aria-pressed", "true");
    const [first, second] = browseRequests(fetchSpy).map(query);
    expect(first!.get("live")).toBe("true");
    expect(first!.get("wait")).toBeNull();
    expect(second!.get("cursor")).toBe("t1");
    expect(second!.get("wait")).toBe("2");
  });
});

describe("mergeAnswer", () => {
  const at = (offset: number, second: number) =>
    message({ offset, timestamp: `2026-01-05T10:00:${String(second).padStart(2, "0")}Z` });

  it("keeps the newest records of a newest-first scan and the first ones of a forward scan", () => {
    const current = [at(1, 1), at(5, 5)];
    const incoming = [at(3, 3), at(9, 9)];
    expect(mergeAnswer(current, incoming, "newest", 2).map((m) => m.offset)).toEqual([5, 9]);
    expect(mergeAnswer(current, incoming, "forward", 3).map((m) => m.offset)).toEqual([1, 3, 5]);
  });

  it("keeps a live tail to its last rows", () => {
    const many = Array.from({ length: LIVE_ROWS + 5 }, (_, index) => at(index, 0));
    expect(mergeAnswer([], many, "live", 50)).toHaveLength(LIVE_ROWS);
  });
});

describe("messagesAsCsv", () => {
  it("quotes fields and defuses spreadsheet formulas", () => {
    const csv = messagesAsCsv([
      message({ key: { data: "=HYPERLINK(1)", encoding: "utf-8" }, value: { data: 'a,"b"', encoding: "utf-8" } }),
    ]);
    const [header, row] = csv.trim().split("\r\n");
    expect(header).toBe("partition,offset,timestamp,key,value,headers,size");
    expect(row).toContain("'=HYPERLINK(1)");
    expect(row).toContain('"a,""b"""');
  });
});
