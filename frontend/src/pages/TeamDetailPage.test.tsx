import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { cluster } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import {
  membership,
  page,
  payments,
  paymentsPolicy,
  paymentsPrefix,
  query,
  signedInHandlers,
} from "../test/tenancyFixtures";

const members = [membership(1, 1, "ada", "team_admin"), membership(2, 1, "bo", "viewer")];

function stubTeam(options: { orgAdminOf?: number[]; myRole?: "team_admin" | "developer" | "viewer" }, extra = {}) {
  const signedIn = signedInHandlers({
    orgAdminOf: options.orgAdminOf,
    teamRoles: options.myRole ? [membership(9, 1, "me", options.myRole)] : [],
  });
  return stubFetch({
    ...signedIn,
    // The team page lists the team's members from the endpoint that also holds the caller's own roles.
    "GET /api/v1/memberships/": (request) =>
      query(request).has("username") ? signedIn["GET /api/v1/memberships/"] : page(members),
    "GET /api/v1/teams/1/": json(200, payments),
    "GET /api/v1/prefixes/": page([paymentsPrefix]),
    "GET /api/v1/policies/": page([paymentsPolicy]),
    ...extra,
  });
}

describe("TeamDetailPage", () => {
  it("offers a developer Create topic, for this team", async () => {
    stubTeam({ myRole: "developer" }, { "GET /api/v1/clusters/": page([cluster()]) });
    const { user } = renderApp("/teams/1");

    await user.click(await screen.findByRole("button", { name: "Create topic" }));
    const dialog = screen.getByRole("dialog", { name: "Create topic" });
    expect(within(dialog).getByLabelText("Team")).toHaveValue("1");
    await waitFor(() => expect(within(dialog).getByLabelText("Name")).toHaveAccessibleDescription(/payments\./));
  });

  it("offers a viewer no Create topic", async () => {
    stubTeam({ myRole: "viewer" });
    renderApp("/teams/1");
    expect(await screen.findByRole("heading", { level: 1, name: "Payments" })).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Create topic" })).not.toBeInTheDocument();
  });

  it("gives an org admin every action: members, prefixes and the policy", async () => {
    stubTeam({ orgAdminOf: [10] });
    renderApp("/teams/1");

    expect(await screen.findByRole("heading", { level: 1, name: "Payments" })).toBeInTheDocument();
    expect(await screen.findByRole("form", { name: "Add a member" })).toBeInTheDocument();
    expect(await screen.findByRole("combobox", { name: "Role of bo" })).toHaveValue("viewer");
    expect(screen.getByRole("form", { name: "Add a prefix" })).toBeInTheDocument();
    expect(await screen.findByRole("button", { name: "Edit policy" })).toBeInTheDocument();
    expect(
      within(screen.getByRole("table", { name: "Members" })).getAllByRole("button", { name: "Remove" }),
    ).toHaveLength(2);
  });

  it("shows a developer the team without actions they may not take", async () => {
    stubTeam({ myRole: "developer" });
    renderApp("/teams/1");

    const table = await screen.findByRole("table", { name: "Members" });
    expect(within(table).getByText("Viewer")).toBeInTheDocument();
    expect(await screen.findByText("^payments\\.")).toBeInTheDocument();
    expect(screen.queryByRole("combobox", { name: "Role of bo" })).not.toBeInTheDocument();
    expect(screen.queryByRole("form", { name: "Add a member" })).not.toBeInTheDocument();
    expect(screen.queryByRole("form", { name: "Add a prefix" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Remove" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Edit policy" })).not.toBeInTheDocument();
  });

  it("lets a team admin manage members but not prefixes or the policy", async () => {
    stubTeam({ myRole: "team_admin" });
    renderApp("/teams/1");

    expect(await screen.findByRole("form", { name: "Add a member" })).toBeInTheDocument();
    expect(await screen.findByText("^payments\\.")).toBeInTheDocument();
    expect(screen.queryByRole("form", { name: "Add a prefix" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Edit policy" })).not.toBeInTheDocument();
  });

  it("shows the server's field error next to the username", async () => {
    const fetchSpy = stubTeam(
      { orgAdminOf: [10] },
      {
        "POST /api/v1/memberships/": json(400, {
          error: { code: "invalid", message: "The request is not valid.", details: { username: ["No such user."] } },
        }),
      },
    );
    const { user } = renderApp("/teams/1");

    const form = await screen.findByRole("form", { name: "Add a member" });
    await user.type(within(form).getByLabelText("Username"), "nobody");
    await user.selectOptions(within(form).getByLabelText("Role"), "viewer");
    await user.click(within(form).getByRole("button", { name: "Add member" }));

    const username = within(form).getByLabelText("Username");
    await waitFor(() => expect(username).toHaveAccessibleDescription("No such user."));
    expect(username).toHaveAttribute("aria-invalid", "true");
    const sent = requestsOf(fetchSpy).find((request) => request.method === "POST");
    expect(await sent?.json()).toEqual({ team: 1, username: "nobody", role: "viewer" });
  });

  it("checks policy limits before sending and shows the server's pattern error", async () => {
    const fetchSpy = stubTeam(
      { orgAdminOf: [10] },
      {
        "PATCH /api/v1/policies/3/": json(400, {
          error: {
            code: "invalid",
            message: "The request is not valid.",
            details: { naming_pattern: ["Not a valid regular expression: missing )"] },
          },
        }),
      },
    );
    const { user } = renderApp("/teams/1");

    await user.click(await screen.findByRole("button", { name: "Edit policy" }));
    const form = screen.getByRole("form", { name: "Edit policy" });
    const perTopic = within(form).getByLabelText("Max partitions per topic");
    await user.clear(perTopic);
    await user.type(perTopic, "0");
    await user.click(within(form).getByRole("button", { name: "Save policy" }));

    expect(perTopic).toHaveAccessibleDescription(/A whole number from 1 to 100,000/);
    expect(requestsOf(fetchSpy).some((request) => request.method === "PATCH")).toBe(false);

    await user.clear(perTopic);
    await user.type(perTopic, "24");
    const pattern = within(form).getByLabelText("Naming pattern");
    await user.clear(pattern);
    await user.type(pattern, "^(payments");
    await user.click(within(form).getByRole("button", { name: "Save policy" }));

    await waitFor(() => expect(pattern).toHaveAccessibleDescription(/Not a valid regular expression: missing \)/));
    const sent = requestsOf(fetchSpy).find((request) => request.method === "PATCH");
    expect(await sent?.json()).toEqual({
      naming_pattern: "^(payments",
      max_partitions_per_topic: 24,
      max_retention_ms: null,
      max_total_partitions: null,
      allowed_topic_configs: null,
    });
  });
});
