import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { Person } from "../api/types";
import { json, requestsOf, signedIn, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { acme } from "../test/clusterFixtures";
import { page, payments, search, sessionFor } from "../test/tenancyFixtures";

function person(overrides: Partial<Person> = {}): Person {
  return {
    id: 31,
    username: "nina",
    email: "nina@example.com",
    status: "active",
    identity_source: "local",
    is_superuser: false,
    organizations: [{ membership: 5, organization: 10, organization_name: "Acme", is_org_admin: false }],
    teams: [{ membership: 4, team: 2, team_name: "Search", role: "developer" }],
    pending_link: null,
    last_login: null,
    date_joined: "2026-01-02T10:00:00Z",
    ...overrides,
  };
}

const invited = person({
  id: 32,
  username: "paul",
  email: "",
  status: "invited",
  teams: [],
  pending_link: { purpose: "invite", expires_at: "2026-01-05T10:00:00Z", created_at: "2026-01-02T10:00:00Z" },
});

function adminApi(extra: Record<string, Parameters<typeof stubFetch>[0][string]> = {}) {
  return stubFetch({
    "GET /api/v1/auth/session/": json(200, signedIn),
    "GET /api/v1/organizations/": page([acme]),
    "GET /api/v1/org-memberships/": page([]),
    "GET /api/v1/memberships/": page([]),
    "GET /api/v1/teams/": page([payments, search]),
    "GET /api/v1/people/": page([person(), invited]),
    ...extra,
  });
}

describe("PeoplePage", () => {
  it("lists people with their status, open links and team roles", async () => {
    adminApi();
    renderApp("/people");

    const table = await screen.findByRole("table", { name: "People" });
    const nina = within(table).getByRole("row", { name: /nina/ });
    expect(nina).toHaveTextContent("Active");
    expect(nina).toHaveTextContent("Search (Developer)");
    expect(within(nina).getByRole("button", { name: "Reset password" })).toBeInTheDocument();
    const paul = within(table).getByRole("row", { name: /paul/ });
    expect(paul).toHaveTextContent("Invited");
    expect(paul).toHaveTextContent("Invite link expires");
    expect(within(paul).getByRole("button", { name: "New invite link" })).toBeInTheDocument();
  });

  it("invites a person into a team and shows the one-time link once", async () => {
    const url = "http://console.test/set-password#token=abc123";
    const spy = adminApi({
      "POST /api/v1/people/": json(201, {
        person: invited,
        link: { url, purpose: "invite", expires_at: "2026-01-05T10:00:00Z", emailed: false },
      }),
    });
    const { user } = renderApp("/people");

    await user.click(await screen.findByRole("button", { name: "Invite person" }));
    const dialog = screen.getByRole("dialog", { name: "Invite person" });
    await user.type(within(dialog).getByLabelText("Username"), "paul");
    await user.selectOptions(within(dialog).getByLabelText("Team"), "Search");
    await user.selectOptions(within(dialog).getByLabelText("Role"), "viewer");
    await user.click(within(dialog).getByRole("button", { name: "Create invitation" }));

    const shown = await screen.findByRole("dialog", { name: "Invitation for paul" });
    expect(within(shown).getByLabelText("One-time link")).toHaveValue(url);
    const sent = requestsOf(spy).find((request) => request.method === "POST");
    expect(await sent?.json()).toEqual({
      organization: 10,
      username: "paul",
      email: "",
      is_org_admin: false,
      teams: [{ team: 2, role: "viewer" }],
      password: "",
    });
  });

  it("shows a weak password next to the password field", async () => {
    adminApi({
      "POST /api/v1/people/": json(400, {
        error: {
          code: "weak_password",
          message: "This password is too short.",
          details: { password: ["This password is too short."] },
        },
      }),
    });
    const { user } = renderApp("/people");

    await user.click(await screen.findByRole("button", { name: "Invite person" }));
    const dialog = screen.getByRole("dialog", { name: "Invite person" });
    await user.type(within(dialog).getByLabelText("Username"), "paul");
    await user.click(within(dialog).getByLabelText(/Set a password now/));
    await user.type(within(dialog).getByLabelText("Password"), "short");
    await user.click(within(dialog).getByRole("button", { name: "Create person" }));

    expect(await within(dialog).findByText("This password is too short.")).toBeInTheDocument();
  });

  it("deactivates only after the username is typed", async () => {
    const spy = adminApi({
      "POST /api/v1/people/31/deactivate/": json(200, person({ status: "deactivated" })),
    });
    const { user } = renderApp("/people");

    const table = await screen.findByRole("table", { name: "People" });
    await user.click(
      within(within(table).getByRole("row", { name: /nina/ })).getByRole("button", { name: "Deactivate" }),
    );
    const confirm = screen.getByRole("alertdialog", { name: "Deactivate nina?" });
    expect(within(confirm).getByRole("button", { name: "Deactivate" })).toBeDisabled();
    await user.type(within(confirm).getByRole("textbox"), "nina");
    await user.click(within(confirm).getByRole("button", { name: "Deactivate" }));

    await screen.findByRole("table", { name: "People" });
    expect(requestsOf(spy).some((request) => request.url.endsWith("/api/v1/people/31/deactivate/"))).toBe(true);
  });

  it("changes a person's team role and makes them an org admin from the drawer", async () => {
    const spy = adminApi({
      "PATCH /api/v1/memberships/4/": json(200, { id: 4, team: 2, username: "nina", role: "viewer", created_at: "" }),
      "PATCH /api/v1/org-memberships/5/": json(200, { id: 5, organization: 10, username: "nina", is_org_admin: true }),
    });
    const { user } = renderApp("/people");

    await user.click(await screen.findByRole("button", { name: "Teams of nina" }));
    const drawer = screen.getByRole("dialog", { name: "Teams of nina" });
    await user.selectOptions(within(drawer).getByLabelText("Role in Search"), "viewer");
    await user.click(within(drawer).getByRole("checkbox", { name: /Admin of Acme/ }));

    await waitFor(() =>
      expect(
        requestsOf(spy)
          .filter((request) => request.method === "PATCH")
          .map((r) => new URL(r.url).pathname),
      ).toEqual(["/api/v1/memberships/4/", "/api/v1/org-memberships/5/"]),
    );
  });

  it("tells people who are not org admins that only admins manage people", async () => {
    stubFetch({
      "GET /api/v1/auth/session/": json(200, sessionFor("dave")),
      "GET /api/v1/organizations/": page([acme]),
      "GET /api/v1/org-memberships/": page([]),
      "GET /api/v1/memberships/": page([]),
      "GET /api/v1/teams/": page([search]),
    });
    renderApp("/people");

    expect(await screen.findByText("Only organization admins manage people")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Invite person" })).not.toBeInTheDocument();
  });
});
