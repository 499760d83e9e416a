import { configure, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, requestsOf, stubFetch, type StubbedResponse } from "../../test/fetchStub";
import { renderPage } from "../../test/renderPage";
import { query } from "../../test/tenancyFixtures";
import { message, topicDetail } from "../../test/topicFixtures";
import { MessageBrowser } from "./MessageBrowser";

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

describe("MessageBrowser", { timeout: 30_000 }, () => {
  it("lists each record with its partition, offset, key, value and headers", async () => {
    renderBrowser(
      json(200, [
        message({ partition: 1, offset: 3, key: { data: "refund-9", encoding: "utf-8" } }),
        message({
          partition: 0,
          offset: 6,
          key: { data: null, encoding: "null" },
          value: { data: "plain text", encoding: "utf-8" },
          headers: [{ key: "trace", value: { data: "3q2+7w==", encoding: "base64" } }],
        }),
      ]),
    );

    const list = await screen.findByRole("list", { name: "Messages" });
    const [first, second] = within(list).getAllByRole("listitem");
    expect(first).toHaveTextContent("partition 1");
    expect(first).toHaveTextContent("offset 3");
    expect(first).toHaveTextContent("refund-9");
    expect(within(first!).getByLabelText("Value as JSON").textContent).toContain('"amount": 12');
    expect(within(first!).getByRole("definition")).toHaveTextContent("web");
    expect(second).toHaveTextContent("offset 6");
    expect(second).toHaveTextContent(/Key\s*null/);
    expect(within(second!).getByText("plain text")).toBeInTheDocument();
    expect(within(second!).getByRole("definition")).toHaveTextContent("base64 3q2+7w==");
  });

  it("shows a payload decoded with its registry schema above the raw bytes", async () => {
    renderBrowser(
      json(200, [
        message({
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
      ]),
    );

    const decoded = await screen.findByLabelText("Decoded value");
    expect(JSON.parse(decoded.textContent ?? "")).toEqual({ id: "o-1", lines: [{ sku: "tea", quantity: 2 }] });
    expect(
      screen.getByText("Value: Decoded (Protobuf, id 7) · payments.orders-value v4 · acme.Order"),
    ).toBeInTheDocument();
    expect(screen.getByText("AAAAAAcCBG8tMQ==")).toBeInTheDocument();
  });

  it("says an empty partition has no messages, after asking for that partition", async () => {
    const { fetchSpy } = renderBrowser(json(200, []), "?partition=1&start=earliest");

    expect(await screen.findByText("No messages")).toBeInTheDocument();
    expect(screen.queryByRole("list", { name: "Messages" })).not.toBeInTheDocument();
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
        : json(200, [message({ offset: 11 })]),
    );

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not read messages");
    expect(alert).toHaveTextContent("The cluster did not answer.");
    failing = false;
    await user.click(within(alert).getByRole("button", { name: "Try again" }));

    expect(await screen.findByText("offset 11")).toBeInTheDocument();
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
    expect(browseRequests(fetchSpy)).toHaveLength(2);
  });

  it("shows its loading state while the read is under way", async () => {
    renderBrowser(() => new Promise<StubbedResponse>(() => {}));
    expect(await screen.findByRole("status")).toHaveTextContent("Reading messages…");
  });
});
