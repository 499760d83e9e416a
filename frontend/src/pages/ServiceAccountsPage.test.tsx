import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import {
  apiKey,
  billingAccount,
  membership,
  page,
  payments,
  query,
  search,
  signedInHandlers,
} from "../test/tenancyFixtures";

const searchAccount = { ...billingAccount, id: 21, team: 2, name: "indexer", principal: "User:indexer" };

function stubAccounts(myRoles: Parameters<typeof membership>[3][] = ["developer"], extra = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: myRoles.map((role) => membership(9, 1, "me", role)) }),
    "GET /api/v1/teams/": page([payments, search]),
    "GET /api/v1/service-accounts/": (request) => {
      const team = query(request).get("team");
      return page([billingAccount, searchAccount].filter((account) => !team || String(account.team) === team));
    },
    ...extra,
  });
}

describe("ServiceAccountsPage", () => {
  it("filters by the team in the URL and keeps the filter in the URL", async () => {
    const fetchSpy = stubAccounts();
    const { router, user } = renderApp("/service-accounts?team=1");

    const table = await screen.findByRole("table", { name: "Service accounts" });
    expect(within(table).getByRole("link", { name: "billing-app" })).toHaveAttribute("href", "/service-accounts/20");
    expect(within(table).queryByText("indexer")).not.toBeInTheDocument();
    expect(screen.getByLabelText("Team")).toHaveValue("1");
    const listed = requestsOf(fetchSpy).filter(
      (request) => new URL(request.url).pathname === "/api/v1/service-accounts/",
    );
    expect(query(listed[0]!).get("team")).toBe("1");

    await user.selectOptions(screen.getByLabelText("Team"), "2");
    expect(await screen.findByRole("link", { name: "indexer" })).toBeInTheDocument();
    expect(router.state.location.search).toBe("?team=2");

    await user.selectOptions(screen.getByLabelText("Team"), "");
    expect(await screen.findByRole("link", { name: "billing-app" })).toBeInTheDocument();
    expect(router.state.location.search).toBe("");
  });

  it("offers no create button to a viewer", async () => {
    stubAccounts(["viewer"]);
    renderApp("/service-accounts");

    expect(await screen.findByRole("table", { name: "Service accounts" })).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByRole("button", { name: "New service account" })).not.toBeInTheDocument());
  });

  it("shows the empty and error states", async () => {
    stubAccounts(["developer"], {
      "GET /api/v1/service-accounts/": (request: Request) =>
        query(request).get("team") === "2"
          ? json(503, { error: { code: "unavailable", message: "Try later.", details: {} } })
          : page([]),
    });
    const { user } = renderApp("/service-accounts");

    expect(await screen.findByText("No service accounts yet")).toBeInTheDocument();
    await user.selectOptions(screen.getByLabelText("Team"), "2");
    expect(await screen.findByRole("alert")).toHaveTextContent("Could not load the service accounts");
  });

  it("creates an account, showing the server's field error next to the name first", async () => {
    let attempts = 0;
    const fetchSpy = stubAccounts(["developer"], {
      "POST /api/v1/service-accounts/": () => {
        attempts += 1;
        return attempts === 1
          ? json(400, {
              error: {
                code: "invalid",
                message: "The request is not valid.",
                details: { name: ["A service account named this is reserved."] },
              },
            })
          : json(201, { ...billingAccount, id: 33, name: "ledger" });
      },
      "GET /api/v1/service-accounts/33/": json(200, { ...billingAccount, id: 33, name: "ledger" }),
      "GET /api/v1/api-keys/": page([apiKey({ name: "first" })]),
    });
    const { router, user } = renderApp("/service-accounts");

    await user.click(await screen.findByRole("button", { name: "New service account" }));
    const dialog = screen.getByRole("dialog", { name: "New service account" });
    // Only teams where the person may create accounts are offered.
    expect(
      within(dialog)
        .getAllByRole("option")
        .map((option) => option.textContent),
    ).toEqual(["Payments"]);
    const name = within(dialog).getByLabelText("Name");

    await user.type(name, "bad name");
    await user.click(within(dialog).getByRole("button", { name: "Create" }));
    expect(name).toHaveAccessibleDescription(/1 to 64 letters, digits/);
    expect(attempts).toBe(0);

    await user.clear(name);
    await user.type(name, "ledger");
    await user.click(within(dialog).getByRole("button", { name: "Create" }));
    await waitFor(() => expect(name).toHaveAccessibleDescription(/A service account named this is reserved\./));

    await user.click(within(dialog).getByRole("button", { name: "Create" }));
    expect(await screen.findByRole("heading", { level: 1, name: "ledger" })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/service-accounts/33");
    const posted = requestsOf(fetchSpy).filter((request) => request.method === "POST");
    expect(await posted[1]!.json()).toEqual({ team: 1, name: "ledger", description: "" });
  });
});
