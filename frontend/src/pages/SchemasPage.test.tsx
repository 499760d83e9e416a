import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { CSRF_HEADER_NAME } from "../api/csrf";
import { REGISTRY_CONTENT_TYPE } from "../api/schemaRegistry";
import { acme, cluster } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { membership, page, paymentsPrefix, signedInHandlers } from "../test/tenancyFixtures";

const REGISTRY = "/clusters/3/schema-registry";
const SUBJECT = "payments.card/v2-value";
const ENCODED = "payments.card%2Fv2-value";

const v1 = '{"type":"record","name":"Card","fields":[{"name":"id","type":"string"}]}';
const v2 =
  '{"type":"record","name":"Card","fields":[{"name":"id","type":"string"},{"name":"amount","type":"long","default":0}]}';

function version(number: number, schema: string) {
  return json(200, { subject: SUBJECT, version: number, id: 100 + number, schema });
}

type Handlers = Parameters<typeof stubFetch>[0];

function stubRegistry(role: "viewer" | "developer", extra: Handlers = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(9, 1, "me", role)] }),
    "GET /api/v1/organizations/": page([acme]),
    "GET /api/v1/prefixes/": page([paymentsPrefix]),
    "GET /api/v1/clusters/": page([cluster(), cluster({ id: 4, name: "analytics" })]),
    [`GET ${REGISTRY}/schemas`]: json(200, [
      { subject: SUBJECT, version: 1, id: 101, schema: v1 },
      { subject: SUBJECT, version: 2, id: 102, schema: v2 },
      { subject: "com.acme.Shared", version: 3, id: 7, schemaType: "PROTOBUF", schema: "syntax = 'proto3';" },
    ]),
    "GET /clusters/4/schema-registry/schemas": json(200, []),
    [`GET ${REGISTRY}/subjects/${ENCODED}/versions`]: json(200, [1, 2]),
    [`GET ${REGISTRY}/subjects/${ENCODED}/versions/1`]: version(1, v1),
    [`GET ${REGISTRY}/subjects/${ENCODED}/versions/2`]: version(2, v2),
    [`GET ${REGISTRY}/config/${ENCODED}`]: json(200, { compatibilityLevel: "BACKWARD" }),
    ...extra,
  });
}

describe("SchemasPage", () => {
  it("lists the chosen cluster's subjects with their topics and keeps the cluster in the URL", async () => {
    stubRegistry("viewer");
    const { router, user } = renderApp("/schemas");

    const table = await screen.findByRole("table", { name: "Subjects" });
    const link = within(table).getByRole("link", { name: SUBJECT });
    expect(link).toHaveAttribute("href", `/schemas/3/${ENCODED}`);
    expect(within(table).getAllByRole("row")[2]).toHaveTextContent("payments.card/v2value");
    expect(within(table).getByText("com.acme.Shared").closest("tr")).toHaveTextContent("—");
    // Type and live versions: Avro when the registry leaves the type out; versions 1 and 2 deleted here.
    expect(within(table).getByRole("row", { name: new RegExp(`^${SUBJECT}`) })).toHaveTextContent(/Avro\s*2$/);
    expect(within(table).getByText("com.acme.Shared").closest("tr")).toHaveTextContent(/Protobuf\s*1 \(latest v3\)$/);

    await user.type(screen.getByLabelText("Filter subjects"), "shared");
    expect(within(table).getAllByRole("row")).toHaveLength(2);

    await user.selectOptions(screen.getByLabelText("Cluster"), "4");
    expect(await screen.findByText("No subjects yet")).toBeInTheDocument();
    expect(router.state.location.search).toBe("?cluster=4");
  });

  it("shows the registry's error message", async () => {
    stubRegistry("viewer", {
      "GET /clusters/4/schema-registry/schemas": json(403, {
        error_code: 40301,
        message: "User is denied operation Read",
      }),
    });
    renderApp("/schemas?cluster=4");
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not load the subjects");
    expect(alert).toHaveTextContent("User is denied operation Read");
  });
});

describe("SchemaSubjectPage", () => {
  it("shows the versions, the latest schema pretty-printed and a side-by-side diff", async () => {
    const fetchSpy = stubRegistry("viewer");
    const { user } = renderApp(`/schemas/3/${ENCODED}`);

    expect(await screen.findByRole("heading", { level: 1, name: SUBJECT })).toBeInTheDocument();
    expect(screen.getByText(/Used for the values of topic/)).toHaveTextContent("payments.card/v2");
    const latest = await screen.findByLabelText("Schema of version 2");
    expect(latest.textContent).toContain('    {\n      "name": "amount",');

    const diff = await screen.findByRole("table", { name: "Version 1 compared with version 2" });
    const changed = [...diff.querySelectorAll('tr:not([data-kind="same"])')];
    // Adding a field only adds lines: "    }," closing the old last field and the new field's four.
    expect(changed.map((row) => row.getAttribute("data-kind"))).toEqual(Array(5).fill("added"));
    expect(changed[0]!.textContent).toBe("8    },");
    expect(changed[2]).toHaveTextContent('"name": "amount",');
    expect(screen.getByText("5 lines differ.")).toBeInTheDocument();

    await user.selectOptions(screen.getByLabelText("From"), "2");
    expect(await screen.findByText("The two versions are identical.")).toBeInTheDocument();

    const registryPaths = requestsOf(fetchSpy)
      .map((request) => new URL(request.url))
      .filter((url) => url.pathname.startsWith(REGISTRY));
    expect(registryPaths.every((url) => !url.pathname.includes("card/v2"))).toBe(true);
    expect(registryPaths.find((url) => url.pathname.includes("/config/"))?.searchParams.get("defaultToGlobal")).toBe(
      "true",
    );
  });

  it("lets a viewer test compatibility but not register or change the level", async () => {
    stubRegistry("viewer", {
      [`POST ${REGISTRY}/compatibility/subjects/${ENCODED}/versions/latest`]: json(200, {
        is_compatible: false,
        messages: [
          "READER_FIELD_MISSING_DEFAULT_VALUE at /fields/1: reader field 'currency' has no default, {oldSchemaVersion: 2}",
          "{compatibility: 'BACKWARD'}",
        ],
      }),
    });
    const { user } = renderApp(`/schemas/3/${ENCODED}`);

    expect(await screen.findByText("BACKWARD")).toBeInTheDocument();
    expect(screen.queryByLabelText("Compatibility level")).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Register version" })).not.toBeInTheDocument();

    await user.click(screen.getByLabelText("New schema"));
    await user.paste('{"type":"record","name":"Card","fields":[{"name":"currency","type":"string"}]}');
    await user.click(screen.getByRole("button", { name: "Test compatibility" }));
    const messages = await screen.findByRole("list", { name: "Compatibility messages" });
    expect(screen.getByText("Not compatible")).toBeInTheDocument();
    expect(messages).toHaveTextContent("reader field 'currency' has no default");
  });

  it("registers only a tested, compatible schema, with the registry's content type and the CSRF token", async () => {
    document.cookie = "csrftoken=token-123; path=/";
    const fetchSpy = stubRegistry("developer", {
      [`POST ${REGISTRY}/compatibility/subjects/${ENCODED}/versions/latest`]: json(200, {
        is_compatible: true,
        messages: [],
      }),
      [`POST ${REGISTRY}/subjects/${ENCODED}/versions`]: json(200, { id: 103 }),
      [`PUT ${REGISTRY}/config/${ENCODED}`]: json(200, { compatibility: "FULL" }),
    });
    const { user } = renderApp(`/schemas/3/${ENCODED}`);

    const register = await screen.findByRole("button", { name: "Register version" });
    expect(register).toBeDisabled();
    await user.click(screen.getByLabelText("New schema"));
    await user.paste(v2.replace("amount", "total"));
    await user.click(screen.getByRole("button", { name: "Test compatibility" }));
    expect(await screen.findByText("Compatible")).toBeInTheDocument();
    await waitFor(() => expect(register).toBeEnabled());

    // Editing the text after the test asks for a new test.
    await user.type(screen.getByLabelText("New schema"), " ");
    expect(register).toBeDisabled();
    await user.click(screen.getByRole("button", { name: "Test compatibility" }));
    await waitFor(() => expect(register).toBeEnabled());
    await user.click(register);
    expect(await screen.findByText("Registered as schema id 103.")).toBeInTheDocument();

    await user.selectOptions(screen.getByLabelText("Compatibility level"), "FULL");
    await user.click(screen.getByRole("button", { name: "Save level" }));

    const writes = requestsOf(fetchSpy).filter((request) => request.method !== "GET");
    const registered = writes.find((request) => request.url.endsWith(`/subjects/${ENCODED}/versions`))!;
    expect(registered.headers.get("Content-Type")).toBe(REGISTRY_CONTENT_TYPE);
    expect(registered.headers.get(CSRF_HEADER_NAME)).toBe("token-123");
    expect(await registered.json()).toEqual({ schema: `${v2.replace("amount", "total")} `, schemaType: "AVRO" });
    await waitFor(() => expect(writes.length).toBeGreaterThan(0));
    const put = requestsOf(fetchSpy).find((request) => request.method === "PUT");
    expect(await put!.json()).toEqual({ compatibility: "FULL" });
    expect(new URL(writes[0]!.url).searchParams.get("verbose")).toBe("true");
  });
});
