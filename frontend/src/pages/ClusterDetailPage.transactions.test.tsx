import { configure, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { acme, clusterDetail } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { page, signedInHandlers } from "../test/tenancyFixtures";

configure({ asyncUtilTimeout: 10_000 });

type Handlers = Parameters<typeof stubFetch>[0];

const ongoing = {
  transactional_id: "payments-tx-ledger-1",
  state: "Ongoing",
  producer_id: 4001,
  producer_epoch: 3,
  timeout_ms: 60000,
  started_at: "2026-01-05T10:00:00Z",
  partitions: [
    { topic: "payments.ledger", partition: 0 },
    { topic: "payments.ledger", partition: 2 },
  ],
  coordinator_id: 1,
  team: "Payments",
};
const hanging = {
  topic: "payments.ledger",
  partition: 1,
  producer_id: 3007,
  producer_epoch: 0,
  coordinator_epoch: 2,
  open_transaction_offset: 1200,
  last_timestamp_ms: Date.parse("2026-01-05T08:00:00Z"),
};

function stubTransactions(options: { orgAdmin: boolean }, extra: Handlers = {}) {
  return stubFetch({
    ...signedInHandlers({ orgAdminOf: options.orgAdmin ? [10] : [] }),
    "GET /api/v1/organizations/": page([acme]),
    "GET /api/v1/clusters/3/": json(200, clusterDetail()),
    "GET /api/v1/clusters/3/transactions/": json(200, [ongoing]),
    ...extra,
  });
}

describe("ClusterDetailPage's transactions tab", { timeout: 30_000 }, () => {
  it("lists the open transactions with their partitions and team, without the admin's tools", async () => {
    stubTransactions({ orgAdmin: false });
    renderApp("/clusters/3/transactions");

    const table = await screen.findByRole("table", { name: "Transactions" });
    const row = within(table).getAllByRole("row")[1];
    expect(row).toHaveTextContent("payments-tx-ledger-1");
    expect(row).toHaveTextContent("Ongoing");
    expect(row).toHaveTextContent("4001 / 3");
    expect(row).toHaveTextContent("payments.ledger-0, payments.ledger-2");
    expect(row).toHaveTextContent("Payments");
    expect(screen.queryByRole("heading", { name: "Hanging transactions" })).not.toBeInTheDocument();
  });

  it("looks for hanging transactions on request and aborts one after confirmation", async () => {
    let aborted = false;
    const fetchSpy = stubTransactions(
      { orgAdmin: true },
      {
        "GET /api/v1/clusters/3/transactions/hanging/": () => json(200, aborted ? [] : [hanging]),
        "POST /api/v1/clusters/3/transactions/abort/": () => {
          aborted = true;
          return { status: 204 };
        },
      },
    );
    const { user } = renderApp("/clusters/3/transactions");

    await screen.findByRole("table", { name: "Transactions" });
    expect(requestsOf(fetchSpy).some((request) => request.url.includes("/hanging/"))).toBe(false);
    await user.click(screen.getByRole("button", { name: "Look for hanging transactions" }));
    const table = await screen.findByRole("table", { name: "Hanging transactions" });
    expect(within(table).getAllByRole("row")[1]).toHaveTextContent("payments.ledger-1");
    await user.click(
      within(table).getByRole("button", { name: "Abort the transaction of producer 3007 on payments.ledger-1" }),
    );
    const confirm = screen.getByRole("alertdialog", { name: /Abort producer 3007's transaction/ });
    await user.type(within(confirm).getByRole("textbox"), "payments.ledger-1");
    await user.click(within(confirm).getByRole("button", { name: "Abort transaction" }));

    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
    const posted = requestsOf(fetchSpy).find((request) => request.method === "POST")!;
    expect(await posted.json()).toEqual({ topic: "payments.ledger", partition: 1, producer_id: 3007 });
    expect(await screen.findByText("No hanging transactions")).toBeInTheDocument();
    expect(screen.getByRole("status")).toHaveTextContent("The transaction was aborted.");
  });
});
