import { configure, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { cluster } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { billingAccount, membership, page, payments, paymentsPrefix, signedInHandlers } from "../test/tenancyFixtures";
import { binding, grant } from "../test/topicFixtures";
import { filterBindings } from "./AclsPage";

// The machine running the suite is shared and slow at times; pages wait on several requests.
configure({ asyncUtilTimeout: 10_000 });

type Handlers = Parameters<typeof stubFetch>[0];

const grantBindings = [
  binding({ id: 61, grant: 70, operation: "WRITE" }),
  binding({ id: 62, grant: 70, operation: "DESCRIBE" }),
];

function stubAcls(role: Parameters<typeof membership>[3] = "developer", extra: Handlers = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(9, 1, "me", role)] }),
    "GET /api/v1/teams/": page([payments]),
    "GET /api/v1/clusters/": page([cluster()]),
    "GET /api/v1/service-accounts/": page([billingAccount]),
    "GET /api/v1/acls/": page([
      ...grantBindings,
      binding({
        id: 63,
        resource_type: "GROUP",
        resource_name: "payments-",
        operation: "READ",
        pattern_type: "LITERAL",
      }),
      binding({ id: 64, principal: "User:intruder", permission: "DENY", operation: "ALL", team: null, managed: false }),
    ]),
    "GET /api/v1/access-grants/": page([grant({ bindings: grantBindings })]),
    ...extra,
  });
}

const noFilters = { principal: "", type: "", name: "", pattern: "", operation: "", permission: "", cluster: "" };

describe("AclsPage", { timeout: 30_000 }, () => {
  it("filters bindings on every field", () => {
    const bindings = [
      binding(),
      binding({ id: 2, principal: "User:other", permission: "DENY", resource_type: "GROUP" }),
    ];
    expect(filterBindings(bindings, { ...noFilters, principal: "OTHER" }).map((each) => each.id)).toEqual([2]);
    expect(filterBindings(bindings, { ...noFilters, type: "TOPIC" }).map((each) => each.id)).toEqual([60]);
    expect(filterBindings(bindings, { ...noFilters, permission: "ALLOW" }).map((each) => each.id)).toEqual([60]);
    expect(filterBindings(bindings, { ...noFilters, name: "pay", cluster: "3" })).toHaveLength(2);
    expect(filterBindings(bindings, { ...noFilters, cluster: "4" })).toHaveLength(0);
  });

  it("lists bindings with their source and keeps the filters in the URL", async () => {
    const { router, user } = (stubAcls(), renderApp("/acls?type=TOPIC"));

    const table = await screen.findByRole("table", { name: "ACL bindings" });
    expect(within(table).getAllByRole("row")).toHaveLength(4);
    expect(within(table).getAllByText("Producer grant")).toHaveLength(2);
    expect(within(table).getByRole("row", { name: /intruder/ })).toHaveTextContent("unmanaged");
    expect(screen.getByLabelText("Resource type")).toHaveValue("TOPIC");

    await user.selectOptions(screen.getByLabelText("Permission"), "DENY");
    await waitFor(() => expect(router.state.location.search).toBe("?type=TOPIC&permission=DENY"));
    // The router renders navigations as transitions, so the table follows the URL a moment later.
    await waitFor(() => expect(within(table).getAllByRole("row")).toHaveLength(2));
    await user.type(screen.getByLabelText("Principal"), "nobody");
    expect(await screen.findByText("No bindings match")).toBeInTheDocument();
    expect(router.state.location.search).toBe("?type=TOPIC&permission=DENY&principal=nobody");
  });

  it("applies a template with the team's prefixes and shows what it grants", async () => {
    const fetchSpy = stubAcls("developer", {
      "GET /api/v1/prefixes/": page([
        paymentsPrefix,
        { ...paymentsPrefix, id: 6, resource_type: "group", prefix: "payments-" },
      ]),
      "POST /api/v1/access-grants/": json(201, grant({ id: 71, template: "consumer" })),
    });
    const { user } = renderApp("/acls?account=20");

    // A link with ?account= opens the form for that account.
    const dialog = await screen.findByRole("dialog", { name: "Grant access from a template" });
    expect(await within(dialog).findByLabelText("Service account")).toHaveValue("20");
    await waitFor(() => expect(within(dialog).getByLabelText("Topic prefix")).toHaveValue("payments."));
    expect(within(dialog).queryByLabelText("Group prefix")).not.toBeInTheDocument();
    await user.selectOptions(within(dialog).getByLabelText("Template"), "consumer");
    expect(within(dialog).getByLabelText("What the template grants")).toHaveTextContent(
      "READ on consumer groups with the group prefix",
    );
    expect(within(dialog).getByLabelText("Group prefix")).toHaveValue("payments-");
    await user.click(within(dialog).getByRole("button", { name: "Grant access" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    const posted = requestsOf(fetchSpy).find((request) => request.method === "POST")!;
    expect(await posted.json()).toEqual({
      service_account: 20,
      cluster: 3,
      template: "consumer",
      topic_prefix: "payments.",
      group_prefix: "payments-",
      transactional_id_prefix: "",
    });
  });

  it("grants a share consumer its topics and share groups", async () => {
    const fetchSpy = stubAcls("developer", {
      "GET /api/v1/prefixes/": page([
        paymentsPrefix,
        { ...paymentsPrefix, id: 6, resource_type: "group", prefix: "payments-" },
      ]),
      "POST /api/v1/access-grants/": json(201, grant({ id: 73, template: "share_consumer" })),
    });
    const { user } = renderApp("/acls?account=20");

    const dialog = await screen.findByRole("dialog", { name: "Grant access from a template" });
    await waitFor(() => expect(within(dialog).getByLabelText("Topic prefix")).toHaveValue("payments."));
    await user.selectOptions(within(dialog).getByLabelText("Template"), "Share consumer (queue)");
    const grants = within(dialog).getByLabelText("What the template grants");
    expect(grants).toHaveTextContent("READ and DESCRIBE on topics with the topic prefix");
    expect(grants).toHaveTextContent("READ on share groups with the group prefix");
    expect(within(dialog).getByLabelText("Group prefix")).toHaveValue("payments-");
    expect(within(dialog).queryByLabelText("Transactional id prefix")).not.toBeInTheDocument();
    await user.click(within(dialog).getByRole("button", { name: "Grant access" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    const posted = requestsOf(fetchSpy).find((request) => request.method === "POST")!;
    expect(await posted.json()).toEqual({
      service_account: 20,
      cluster: 3,
      template: "share_consumer",
      topic_prefix: "payments.",
      group_prefix: "payments-",
      transactional_id_prefix: "",
    });
  });

  it("asks for the team's transactional-id prefix for a transactional producer", async () => {
    const fetchSpy = stubAcls("developer", {
      "GET /api/v1/prefixes/": page([
        paymentsPrefix,
        { ...paymentsPrefix, id: 7, resource_type: "transactional_id", prefix: "payments-tx-" },
      ]),
      "POST /api/v1/access-grants/": json(201, grant({ id: 72, template: "transactional_producer" })),
    });
    const { user } = renderApp("/acls?account=20");

    const dialog = await screen.findByRole("dialog", { name: "Grant access from a template" });
    await waitFor(() => expect(within(dialog).getByLabelText("Topic prefix")).toHaveValue("payments."));
    expect(within(dialog).queryByLabelText("Transactional id prefix")).not.toBeInTheDocument();
    await user.selectOptions(within(dialog).getByLabelText("Template"), "transactional_producer");
    expect(within(dialog).getByLabelText("What the template grants")).toHaveTextContent(
      "WRITE and DESCRIBE on transactional ids with the transactional-id prefix",
    );
    expect(within(dialog).queryByLabelText("Group prefix")).not.toBeInTheDocument();
    expect(within(dialog).getByLabelText("Transactional id prefix")).toHaveValue("payments-tx-");
    await user.click(within(dialog).getByRole("button", { name: "Grant access" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    const posted = requestsOf(fetchSpy).find((request) => request.method === "POST")!;
    expect(await posted.json()).toEqual({
      service_account: 20,
      cluster: 3,
      template: "transactional_producer",
      topic_prefix: "payments.",
      group_prefix: "",
      transactional_id_prefix: "payments-tx-",
    });
  });

  it("deletes a single binding after confirmation, and revokes a grant as a whole", async () => {
    const fetchSpy = stubAcls("developer", {
      "DELETE /api/v1/acls/63/": { status: 204 },
      "DELETE /api/v1/access-grants/70/": { status: 204 },
    });
    const { user } = renderApp("/acls");

    const table = await screen.findByRole("table", { name: "ACL bindings" });
    // Bindings of a grant are removed with their grant; unmanaged ones only by org admins.
    expect(within(table).getAllByRole("button", { name: /^Delete / })).toHaveLength(1);
    await user.click(within(table).getByRole("button", { name: "Delete READ on payments- for User:billing-app" }));
    const confirm = screen.getByRole("alertdialog", { name: "Delete this ACL binding?" });
    await user.type(within(confirm).getByRole("textbox"), "payments-");
    await user.click(within(confirm).getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());

    const grants = screen.getByRole("table", { name: "Access grants" });
    await user.click(within(grants).getByRole("button", { name: "Revoke Producer grant of billing-app" }));
    const revoke = screen.getByRole("alertdialog", { name: "Revoke this grant?" });
    await user.type(within(revoke).getByRole("textbox"), "billing-app");
    await user.click(within(revoke).getByRole("button", { name: "Revoke" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
    const deletions = requestsOf(fetchSpy).filter((request) => request.method === "DELETE");
    expect(deletions.map((request) => new URL(request.url).pathname)).toEqual([
      "/api/v1/acls/63/",
      "/api/v1/access-grants/70/",
    ]);
  });

  it("offers no changes to a viewer", async () => {
    stubAcls("viewer");
    renderApp("/acls");
    const table = await screen.findByRole("table", { name: "ACL bindings" });
    expect(within(table).queryAllByRole("button", { name: /^Delete/ })).toHaveLength(0);
    expect(screen.queryByRole("button", { name: "Grant access from a template" })).not.toBeInTheDocument();
  });

  it("shows the empty and error states", async () => {
    stubAcls("developer", { "GET /api/v1/acls/": page([]), "GET /api/v1/access-grants/": page([]) });
    renderApp("/acls");
    expect(await screen.findByText("No ACL bindings yet")).toBeInTheDocument();
    expect(screen.getByText("No grants yet")).toBeInTheDocument();
  });

  it("shows an error when the ACLs cannot be loaded", async () => {
    stubAcls("developer", {
      "GET /api/v1/acls/": json(503, { error: { code: "unavailable", message: "Try later.", details: {} } }),
    });
    renderApp("/acls");
    expect(await screen.findByRole("alert")).toHaveTextContent("Could not load the ACLs");
  });
});
