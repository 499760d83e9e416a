import { configure, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { TeamRole } from "../api/types";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { apiKey, billingAccount, membership, page, payments, signedInHandlers } from "../test/tenancyFixtures";

// The page now loads its SCRAM section too; on a busy machine the first lazy load takes a while.
configure({ asyncUtilTimeout: 5000 });

const SECRET = "shk_k9z8y7_s3cr3t-value";

function stubAccount(myRole: TeamRole, extra = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(9, 1, "me", myRole)] }),
    "GET /api/v1/teams/": page([payments]),
    "GET /api/v1/service-accounts/20/": json(200, billingAccount),
    "GET /api/v1/api-keys/": page([apiKey()]),
    "GET /api/v1/scram-credentials/": page([]),
    "GET /api/v1/clusters/": page([]),
    ...extra,
  });
}

function sentBody(spy: ReturnType<typeof stubFetch>, method: string, path: string) {
  const request = requestsOf(spy).find(
    (candidate) => candidate.method === method && new URL(candidate.url).pathname === path,
  );
  return request?.json();
}

describe("ServiceAccountDetailPage", () => {
  it("creates a key and shows its secret once, with a copy button", async () => {
    const fetchSpy = stubAccount("team_admin", {
      "POST /api/v1/api-keys/": json(201, { ...apiKey({ key_id: "k9z8y7", name: "ci" }), secret: SECRET }),
    });
    const { user } = renderApp("/service-accounts/20");

    await user.click(await screen.findByRole("button", { name: "Create API key" }));
    const form = screen.getByRole("dialog", { name: "New API key for billing-app" });
    await user.type(within(form).getByLabelText("Name"), "ci");
    await user.selectOptions(within(form).getByLabelText("Role"), "viewer");
    await user.click(within(form).getByRole("button", { name: "Create key" }));

    const dialog = await screen.findByRole("dialog", { name: "API key ci created" });
    expect(dialog).toHaveTextContent("You won’t see it again");
    expect(within(dialog).getByLabelText("Secret")).toHaveValue(SECRET);
    await user.click(within(dialog).getByRole("button", { name: "Copy" }));
    // user-event stands in a clipboard for the browser's.
    expect(await navigator.clipboard.readText()).toBe(SECRET);
    expect(within(dialog).getByRole("button", { name: "Copied" })).toBeInTheDocument();

    await user.click(within(dialog).getByRole("button", { name: "I have saved it" }));
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(document.body.innerHTML).not.toContain(SECRET);
    expect(await sentBody(fetchSpy, "POST", "/api/v1/api-keys/")).toEqual({
      name: "ci",
      role: "viewer",
      service_account: 20,
      expires_in_days: null,
    });
  });

  it("gives a key a lifetime, never a moment that could be past, and shows the server's refusal", async () => {
    const fetchSpy = stubAccount("developer", {
      "POST /api/v1/api-keys/": json(400, {
        error: {
          code: "invalid",
          message: "Invalid input.",
          details: { expires_in_days: ["Ensure this value is less than or equal to 3650."] },
        },
      }),
    });
    const { user } = renderApp("/service-accounts/20");

    await user.click(await screen.findByRole("button", { name: "Create API key" }));
    const form = screen.getByRole("dialog", { name: "New API key for billing-app" });
    // A developer cannot mint a team-admin key, so the choice is not offered.
    expect(
      within(form)
        .getAllByRole("option")
        .filter((option) => option.closest("select") === within(form).getByLabelText("Role"))
        .map((option) => option.textContent),
    ).toEqual(["Developer", "Viewer"]);
    expect(
      within(within(form).getByLabelText("Expires after") as HTMLElement)
        .getAllByRole("option")
        .map((option) => option.textContent),
    ).toEqual(["Never", "7 days", "30 days", "90 days", "1 year"]);
    await user.type(within(form).getByLabelText("Name"), "ci");
    await user.selectOptions(within(form).getByLabelText("Expires after"), "30 days");
    await user.click(within(form).getByRole("button", { name: "Create key" }));

    expect(await sentBody(fetchSpy, "POST", "/api/v1/api-keys/")).toEqual({
      name: "ci",
      role: "developer",
      service_account: 20,
      expires_in_days: 30,
    });
    await waitFor(() =>
      expect(within(form).getByLabelText("Expires after")).toHaveAccessibleDescription(/less than or equal to 3650/),
    );
  });

  it("rotates a key with the chosen overlap and shows the new secret once", async () => {
    const fetchSpy = stubAccount("developer", {
      "POST /api/v1/api-keys/k1a2b3/rotate/": json(201, { ...apiKey({ key_id: "k5", name: "prod" }), secret: SECRET }),
    });
    const { user } = renderApp("/service-accounts/20");

    await user.click(await screen.findByRole("button", { name: "Rotate prod" }));
    const dialog = screen.getByRole("dialog", { name: "Rotate API key prod?" });
    await user.selectOptions(within(dialog).getByLabelText("Old key keeps working for"), "1 day");
    await user.click(within(dialog).getByRole("button", { name: "Rotate key" }));

    const secret = await screen.findByRole("dialog", { name: "API key prod rotated" });
    expect(within(secret).getByLabelText("Secret")).toHaveValue(SECRET);
    expect(await sentBody(fetchSpy, "POST", "/api/v1/api-keys/k1a2b3/rotate/")).toEqual({ overlap_seconds: 86_400 });
  });

  it("revokes a key only after its name is typed", async () => {
    const fetchSpy = stubAccount("developer", {
      "POST /api/v1/api-keys/k1a2b3/revoke/": json(200, apiKey({ status: "revoked" })),
    });
    const { user } = renderApp("/service-accounts/20");

    await user.click(await screen.findByRole("button", { name: "Revoke prod" }));
    const dialog = screen.getByRole("alertdialog", { name: "Revoke API key prod?" });
    expect(within(dialog).getByRole("button", { name: "Revoke" })).toBeDisabled();
    await user.type(within(dialog).getByLabelText(/to confirm/), "prod");
    await user.click(within(dialog).getByRole("button", { name: "Revoke" }));

    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
    expect(requestsOf(fetchSpy).map((request) => `${request.method} ${new URL(request.url).pathname}`)).toContain(
      "POST /api/v1/api-keys/k1a2b3/revoke/",
    );
  });

  it("shows a viewer the keys without any action", async () => {
    stubAccount("viewer");
    renderApp("/service-accounts/20");

    expect(await screen.findByRole("table", { name: "API keys" })).toHaveTextContent("prod");
    expect(screen.queryByRole("button", { name: "Create API key" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /Rotate|Revoke/ })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Delete service account" })).not.toBeInTheDocument();
  });

  it("lets a team admin delete the account by typing its name", async () => {
    stubAccount("team_admin", {
      "DELETE /api/v1/service-accounts/20/": { status: 204 },
      "GET /api/v1/service-accounts/": page([]),
    });
    const { router, user } = renderApp("/service-accounts/20");

    await user.click(await screen.findByRole("button", { name: "Delete service account" }));
    const dialog = screen.getByRole("alertdialog", { name: "Delete service account billing-app?" });
    await user.type(within(dialog).getByLabelText(/to confirm/), "billing-app");
    await user.click(within(dialog).getByRole("button", { name: "Delete" }));

    expect(await screen.findByText("No service accounts yet")).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/service-accounts");
    expect(router.state.location.search).toBe("?team=1");
  });

  it("shows the error when the account cannot be loaded", async () => {
    stubAccount("viewer", {
      "GET /api/v1/service-accounts/20/": json(404, {
        error: { code: "not_found", message: "Not found.", details: {} },
      }),
    });
    renderApp("/service-accounts/20");

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not load the service account");
    expect(alert).toHaveTextContent("Not found.");
  });
});
