import { configure, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { TeamRole } from "../../api/types";
import { cluster } from "../../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../../test/fetchStub";
import { renderApp } from "../../test/renderApp";
import { apiKey, billingAccount, membership, page, payments, signedInHandlers } from "../../test/tenancyFixtures";
import { scramCredential } from "../../test/topicFixtures";

// The machine running the suite is shared and slow at times; pages wait on several requests.
configure({ asyncUtilTimeout: 10_000 });

const PASSWORD = "Zx9-one-time-scram-password";

function stubAccount(role: TeamRole, extra: Parameters<typeof stubFetch>[0] = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(9, 1, "me", role)] }),
    "GET /api/v1/teams/": page([payments]),
    "GET /api/v1/service-accounts/20/": json(200, billingAccount),
    "GET /api/v1/api-keys/": page([apiKey()]),
    "GET /api/v1/clusters/": page([cluster(), cluster({ id: 4, name: "analytics" })]),
    "GET /api/v1/scram-credentials/": page([scramCredential()]),
    ...extra,
  });
}

describe("SCRAM credentials on the service account page", { timeout: 30_000 }, () => {
  it("lists credentials per cluster and issues one, showing the password once", async () => {
    const fetchSpy = stubAccount("developer", {
      "POST /api/v1/scram-credentials/": json(201, { ...scramCredential({ id: 91, cluster: 4 }), password: PASSWORD }),
    });
    const { user } = renderApp("/service-accounts/20");

    const table = await screen.findByRole("table", { name: "SCRAM credentials" });
    expect(within(table).getByRole("row", { name: /orders/ })).toHaveTextContent("SCRAM-SHA-512");
    expect(screen.getByRole("link", { name: "Grant access" })).toHaveAttribute("href", "/acls?account=20");

    await user.click(screen.getByRole("button", { name: "Issue credential" }));
    const dialog = screen.getByRole("dialog", { name: "Issue a SCRAM credential for billing-app" });
    // Only clusters without a credential yet are offered.
    expect(
      within(dialog)
        .getAllByRole("option", { name: /analytics|orders/ })
        .map((o) => o.textContent),
    ).toEqual(["analytics"]);
    await user.click(within(dialog).getByRole("button", { name: "Issue credential" }));
    const secret = await screen.findByRole("dialog", { name: "SCRAM credential issued" });
    expect(within(secret).getByLabelText("Secret")).toHaveValue(PASSWORD);
    await user.click(within(secret).getByRole("button", { name: "I have saved it" }));
    expect(screen.queryByDisplayValue(PASSWORD)).not.toBeInTheDocument();
    const posted = requestsOf(fetchSpy).find((request) => request.method === "POST")!;
    expect(await posted.json()).toEqual({ service_account: 20, cluster: 4, mechanism: "SCRAM-SHA-512" });
  });

  it("rotates a password after confirmation and deletes a credential", async () => {
    const fetchSpy = stubAccount("developer", {
      "POST /api/v1/scram-credentials/90/rotate/": json(200, { ...scramCredential(), password: PASSWORD }),
      "DELETE /api/v1/scram-credentials/90/": { status: 204 },
    });
    const { user } = renderApp("/service-accounts/20");

    await user.click(await screen.findByRole("button", { name: "Rotate the password on orders" }));
    const confirm = screen.getByRole("alertdialog", { name: "Rotate this SCRAM password?" });
    await user.type(within(confirm).getByRole("textbox"), "orders");
    await user.click(within(confirm).getByRole("button", { name: "Rotate" }));
    const secret = await screen.findByRole("dialog", { name: "SCRAM password rotated" });
    expect(within(secret).getByLabelText("Secret")).toHaveValue(PASSWORD);
    await user.click(within(secret).getByRole("button", { name: "I have saved it" }));

    await user.click(screen.getByRole("button", { name: "Delete the credential on orders" }));
    const removal = screen.getByRole("alertdialog", { name: "Delete this SCRAM credential?" });
    await user.type(within(removal).getByRole("textbox"), "orders");
    await user.click(within(removal).getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(requestsOf(fetchSpy).some((request) => request.method === "DELETE")).toBe(true));
  });

  it("shows a viewer the credentials without any action", async () => {
    stubAccount("viewer");
    renderApp("/service-accounts/20");
    const table = await screen.findByRole("table", { name: "SCRAM credentials" });
    expect(within(table).queryAllByRole("button", { name: /^(Rotate|Delete) the/ })).toHaveLength(0);
    expect(screen.queryByRole("button", { name: "Issue credential" })).not.toBeInTheDocument();
  });

  it("shows the empty and error states", async () => {
    stubAccount("developer", { "GET /api/v1/scram-credentials/": page([]) });
    renderApp("/service-accounts/20");
    expect(await screen.findByText("No SCRAM credentials")).toBeInTheDocument();
  });

  it("shows an error when the credentials cannot be loaded", async () => {
    stubAccount("developer", {
      "GET /api/v1/scram-credentials/": json(503, {
        error: { code: "unavailable", message: "Try later.", details: {} },
      }),
    });
    renderApp("/service-accounts/20");
    expect(await screen.findByRole("alert")).toHaveTextContent("Could not load the SCRAM credentials");
  });
});
