import { configure, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { cluster } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { billingAccount, membership, page, payments, signedInHandlers } from "../test/tenancyFixtures";
import { quota } from "../test/topicFixtures";
import { formatLimit } from "./QuotasPage";

// The machine running the suite is shared and slow at times; pages wait on several requests.
configure({ asyncUtilTimeout: 10_000 });

type Handlers = Parameters<typeof stubFetch>[0];

function stubQuotas(role: Parameters<typeof membership>[3] = "developer", extra: Handlers = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(9, 1, "me", role)] }),
    "GET /api/v1/teams/": page([payments]),
    "GET /api/v1/clusters/": page([cluster()]),
    "GET /api/v1/service-accounts/": page([billingAccount]),
    "GET /api/v1/quotas/": page([
      quota(),
      quota({
        id: 81,
        team: null,
        entity: { user: null },
        entity_key: "user=<default>",
        values: { consumer_byte_rate: 2048, request_percentage: 50 },
        managed: false,
      }),
    ]),
    ...extra,
  });
}

describe("QuotasPage", { timeout: 30_000 }, () => {
  it("lists quotas with readable limits", async () => {
    stubQuotas();
    renderApp("/quotas");
    const table = await screen.findByRole("table", { name: "Quotas" });
    const mine = within(table).getByRole("row", { name: /user=billing-app/ });
    expect(mine).toHaveTextContent("1.0 MiB/s");
    expect(mine).toHaveTextContent("applied");
    const defaults = within(table).getByRole("row", { name: /user=<default>/ });
    expect(defaults).toHaveTextContent("2.0 KiB/s");
    expect(defaults).toHaveTextContent("50 %");
    // The team's developer changes the team's quota, not the organization's defaults.
    expect(within(mine).getByRole("button", { name: "Edit user=billing-app" })).toBeInTheDocument();
    expect(within(defaults).queryByRole("button")).not.toBeInTheDocument();
  });

  it("creates a quota for a service account", async () => {
    const fetchSpy = stubQuotas("developer", { "POST /api/v1/quotas/": json(201, quota({ id: 82 })) });
    const { user } = renderApp("/quotas");

    await user.click(await screen.findByRole("button", { name: "New quota" }));
    const dialog = screen.getByRole("dialog", { name: "New quota" });
    expect(within(dialog).getByLabelText("User name")).toHaveValue("billing-app");
    await user.click(within(dialog).getByRole("button", { name: "Set quota" }));
    expect(within(dialog).getByRole("alert")).toHaveTextContent("Set at least one limit.");
    await user.type(within(dialog).getByLabelText("Produce bytes/s"), "500000");
    await user.selectOptions(within(dialog).getByLabelText("Client id"), "named");
    await user.type(within(dialog).getByLabelText("Client id name"), "checkout");
    await user.click(within(dialog).getByRole("button", { name: "Set quota" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    const posted = requestsOf(fetchSpy).find((request) => request.method === "POST")!;
    expect(await posted.json()).toEqual({
      cluster: 3,
      entity: { user: "billing-app", client_id: "checkout" },
      values: { producer_byte_rate: 500000 },
    });
  });

  it("edits limits, clearing one, and deletes after confirmation", async () => {
    const fetchSpy = stubQuotas("developer", {
      "PATCH /api/v1/quotas/80/": json(200, quota()),
      "DELETE /api/v1/quotas/80/": { status: 204 },
    });
    const { user } = renderApp("/quotas");

    await user.click(await screen.findByRole("button", { name: "Edit user=billing-app" }));
    const dialog = screen.getByRole("dialog", { name: "Edit quota" });
    await user.clear(within(dialog).getByLabelText("Produce bytes/s"));
    await user.type(within(dialog).getByLabelText("Fetch bytes/s"), "1000");
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());

    await user.click(screen.getByRole("button", { name: "Delete user=billing-app" }));
    const confirm = screen.getByRole("alertdialog", { name: "Delete this quota?" });
    await user.type(within(confirm).getByRole("textbox"), "user=billing-app");
    await user.click(within(confirm).getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());

    const patch = requestsOf(fetchSpy).find((request) => request.method === "PATCH")!;
    expect(await patch.json()).toEqual({
      values: {
        producer_byte_rate: null,
        consumer_byte_rate: 1000,
        request_percentage: null,
        controller_mutation_rate: null,
      },
    });
    expect(requestsOf(fetchSpy).some((request) => request.method === "DELETE")).toBe(true);
  });

  it("offers no changes to a viewer", async () => {
    stubQuotas("viewer");
    renderApp("/quotas");
    const table = await screen.findByRole("table", { name: "Quotas" });
    expect(within(table).queryAllByRole("button", { name: /^(Edit|Delete) / })).toHaveLength(0);
    expect(screen.queryByRole("button", { name: "New quota" })).not.toBeInTheDocument();
  });

  it("shows the loading, empty and error states", async () => {
    stubQuotas("developer", { "GET /api/v1/quotas/": page([]) });
    renderApp("/quotas");
    expect(screen.getByRole("status")).toBeInTheDocument();
    expect(await screen.findByText("No quotas yet")).toBeInTheDocument();
  });

  it("shows an error when the quotas cannot be loaded", async () => {
    stubQuotas("developer", {
      "GET /api/v1/quotas/": json(503, { error: { code: "unavailable", message: "Try later.", details: {} } }),
    });
    renderApp("/quotas");
    expect(await screen.findByRole("alert")).toHaveTextContent("Could not load the quotas");
  });
});

describe("formatLimit", () => {
  it("shows Kafka's 'no limit' values as unlimited", () => {
    expect(formatLimit("producer_byte_rate", 9223372036854775807)).toBe("unlimited");
    expect(formatLimit("request_percentage", 2147483647)).toBe("unlimited");
    expect(formatLimit("controller_mutation_rate", 1.7976931348623157e308)).toBe("unlimited");
    expect(formatLimit("producer_byte_rate", 1048576)).toBe("1.0 MiB/s");
    expect(formatLimit("request_percentage", 50)).toBe("50 %");
    expect(formatLimit("consumer_byte_rate", undefined)).toBe("—");
  });
});
