import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { acme, cluster, clusterDetail, logLine, operation } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { page, signedInHandlers } from "../test/tenancyFixtures";

function stubDetail(options: { orgAdmin: boolean }, extra: Parameters<typeof stubFetch>[0] = {}) {
  return stubFetch({
    ...signedInHandlers({ orgAdminOf: options.orgAdmin ? [10] : [] }),
    "GET /api/v1/organizations/": page([acme]),
    "GET /api/v1/clusters/3/": json(200, clusterDetail()),
    "GET /api/v1/operations/": page([
      operation({ state: "succeeded", step: 5, step_name: "verify", log: [logLine("cluster answers Metadata")] }),
    ]),
    ...extra,
  });
}

describe("ClusterDetailPage", () => {
  it("splits the cluster into tabs: overview, brokers linking to their pages, one broker's configs", async () => {
    const fetchSpy = stubDetail({ orgAdmin: false });
    const { user } = renderApp("/clusters/3");

    expect(await screen.findByRole("heading", { level: 1, name: "orders" })).toBeInTheDocument();
    expect(screen.getByText("healthy · 1 broker up")).toBeInTheDocument();
    expect(screen.getByText("StreamHub broker")).toBeInTheDocument();
    expect(await screen.findByRole("progressbar", { name: "Done: all 5 steps finished" })).toBeInTheDocument();
    const listed = requestsOf(fetchSpy).find((request) => new URL(request.url).pathname === "/api/v1/operations/")!;
    expect(new URL(listed.url).searchParams.get("cluster")).toBe("3");
    expect(screen.queryByRole("table", { name: "Broker 0 configs" })).not.toBeInTheDocument();
    // Only org admins delete.
    await waitFor(() => expect(screen.queryByRole("button", { name: "Delete cluster" })).not.toBeInTheDocument());

    await user.click(screen.getByRole("link", { name: "Brokers (1)" }));
    const brokers = await screen.findByRole("table", { name: "Brokers" });
    const brokerRow = within(brokers).getAllByRole("row")[1]!;
    expect(brokerRow).toHaveTextContent("127.0.0.1:19092");
    expect(brokerRow).toHaveTextContent("running");
    expect(within(brokerRow).getByRole("link", { name: "Broker 0" })).toHaveAttribute("href", "/clusters/3/brokers/0");

    await user.click(screen.getByRole("link", { name: "Broker configs" }));
    const configs = await screen.findByRole("table", { name: "Broker 0 configs" });
    expect(within(configs).getAllByRole("row")).toHaveLength(4);
    expect(configs).toHaveTextContent("hidden");
    await user.type(screen.getByLabelText("Filter broker 0 configs"), "retention");
    expect(within(configs).getAllByRole("row")).toHaveLength(2);
    // log.retention.hours 168 is read in days.
    expect(configs).toHaveTextContent("log.retention.hours");
    expect(configs).toHaveTextContent("7 days168");
    await user.clear(screen.getByLabelText("Filter broker 0 configs"));
    await user.click(screen.getByRole("checkbox", { name: /Only values set on this cluster/ }));
    // num.partitions is set in the broker's file; the other two are Kafka's defaults.
    expect(within(configs).getAllByRole("row")).toHaveLength(2);
    expect(configs).toHaveTextContent("num.partitions");
  });

  it("says why broker configs are missing", async () => {
    stubDetail(
      { orgAdmin: false },
      {
        "GET /api/v1/clusters/3/": json(
          200,
          clusterDetail({ brokers: [], configs_error: "The cluster did not answer DescribeConfigs." }),
        ),
        "GET /api/v1/operations/": page([]),
      },
    );
    renderApp("/clusters/3/configs");
    expect(await screen.findByText(/The cluster did not answer DescribeConfigs\./)).toBeInTheDocument();
    expect(await screen.findByText("No broker configs to show")).toBeInTheDocument();
  });

  it("checks health on demand", async () => {
    let checked = false;
    stubDetail(
      { orgAdmin: false },
      {
        "POST /api/v1/clusters/3/check-health/": () => {
          checked = true;
          return json(200, cluster({ health: { reachable: false, error: "timed out" } }));
        },
        "GET /api/v1/clusters/3/": () =>
          json(200, clusterDetail(checked ? { health: { reachable: false, brokers_up: 0, error: "timed out" } } : {})),
      },
    );
    const { user } = renderApp("/clusters/3");

    await user.click(await screen.findByRole("button", { name: "Check health" }));
    expect(await screen.findByText("unreachable")).toBeInTheDocument();
    expect(screen.getByText("timed out")).toBeInTheDocument();
  });

  it("deletes after the name is typed, sending it as confirm_name, and follows the deletion", async () => {
    let deleted = false;
    const fetchSpy = stubDetail(
      { orgAdmin: true },
      {
        "DELETE /api/v1/clusters/3/": () => {
          deleted = true;
          return json(202, {
            operation: operation({
              id: 51,
              kind: "delete",
              steps: ["stop brokers", "remove data", "release"],
              step_count: 3,
            }),
            operation_url: "http://localhost/api/v1/operations/51/",
            cluster: cluster({ status: "deleting" }),
          });
        },
        "GET /api/v1/clusters/3/": () => json(200, clusterDetail(deleted ? { status: "deleting" } : {})),
        "GET /api/v1/operations/": () =>
          page(
            deleted
              ? [
                  operation({
                    id: 51,
                    kind: "delete",
                    state: "running",
                    step: 2,
                    step_name: "remove data",
                    steps: ["stop brokers", "remove data", "release"],
                    step_count: 3,
                  }),
                ]
              : [],
          ),
        "GET /api/v1/operations/51/": json(
          200,
          operation({
            id: 51,
            kind: "delete",
            state: "running",
            step: 2,
            step_name: "remove data",
            steps: ["stop brokers", "remove data", "release"],
            step_count: 3,
          }),
        ),
      },
    );
    const { user } = renderApp("/clusters/3");

    await user.click(await screen.findByRole("button", { name: "Delete cluster" }));
    const confirm = screen.getByRole("alertdialog", { name: "Delete cluster orders?" });
    const submit = within(confirm).getByRole("button", { name: "Delete" });
    await user.type(within(confirm).getByRole("textbox"), "order");
    expect(submit).toBeDisabled();
    await user.type(within(confirm).getByRole("textbox"), "s");
    await user.click(submit);

    expect(await screen.findByRole("progressbar", { name: "Step 2 of 3: remove data" })).toBeInTheDocument();
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
    expect(await screen.findByText("deleting")).toBeInTheDocument();
    // Health is only watched while the cluster should be up; the last reading is not shown as current.
    expect(screen.getByText("not watched while deleting")).toBeInTheDocument();
    const sent = requestsOf(fetchSpy).find((request) => request.method === "DELETE")!;
    expect(await sent.json()).toEqual({ confirm_name: "orders" });
  });
});
