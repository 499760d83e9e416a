import { configure, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { signedInHandlers } from "../test/tenancyFixtures";

configure({ asyncUtilTimeout: 10_000 });

describe("ProfilePage", { timeout: 30_000 }, () => {
  it("shows the provider's groups and the teams they gave, apart from the ones granted by hand", async () => {
    stubFetch({
      ...signedInHandlers({}),
      "GET /api/v1/auth/profile/": json(200, {
        user: { id: 1, username: "alice", email: "alice@example.com", is_superuser: false },
        source: "oidc",
        issuer: "https://login.example.com/realms/acme",
        idp_groups: ["kafka-payments", "kafka-billing"],
        last_sso_login_at: "2026-01-05T10:00:00Z",
        organizations: [{ id: 1, name: "Acme", is_org_admin: false, from_idp: true }],
        teams: [
          { id: 2, name: "payments", organization: "Acme", role: "developer", from_idp: true },
          { id: 3, name: "search", organization: "Acme", role: "viewer", from_idp: false },
        ],
      }),
    });
    renderApp("/profile");

    expect(await screen.findByRole("heading", { level: 1, name: "Profile" })).toBeInTheDocument();
    expect(screen.getByText("Single sign-on (https://login.example.com/realms/acme)")).toBeInTheDocument();
    const groups = screen.getByRole("region", { name: "Groups at the identity provider" });
    expect(
      within(groups)
        .getAllByRole("listitem")
        .map((item) => item.textContent),
    ).toEqual(["kafka-payments", "kafka-billing"]);
    const teams = within(screen.getByRole("region", { name: "Teams" })).getAllByRole("row");
    expect(teams.slice(1).map((row) => row.textContent)).toEqual([
      "paymentsAcmeDeveloperIdentity provider",
      "searchAcmeViewerAn administrator",
    ]);
  });
});
