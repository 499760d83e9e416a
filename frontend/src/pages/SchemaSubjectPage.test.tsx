import { configure, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { acme, cluster } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderPage } from "../test/renderPage";
import { membership, page, paymentsPrefix, signedInHandlers } from "../test/tenancyFixtures";
import { SchemaSubjectPage } from "./SchemaSubjectPage";

// The machine running the suite is shared and slow at times.
configure({ asyncUtilTimeout: 10_000 });

type Handlers = Parameters<typeof stubFetch>[0];

const REGISTRY = "/clusters/3/schema-registry";
const SUBJECT = "payments.refunds-key";
const BASE = `${REGISTRY}/subjects/${SUBJECT}`;

/** Three versions of a refund record: v2 renames a field, v3 adds one. */
const SCHEMAS: Record<number, string> = {
  1: '{"type":"record","name":"Refund","fields":[{"name":"id","type":"string"}]}',
  2: '{"type":"record","name":"Refund","fields":[{"name":"refund_id","type":"string"}]}',
  3: '{"type":"record","name":"Refund","fields":[{"name":"refund_id","type":"string"},{"name":"cents","type":"long"}]}',
};

function versionAnswer(version: number) {
  return json(200, { subject: SUBJECT, version, id: 200 + version, schema: SCHEMAS[version] });
}

function stubSubject(role: "viewer" | "developer", extra: Handlers = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(9, 1, "me", role)] }),
    "GET /api/v1/organizations/": page([acme]),
    "GET /api/v1/prefixes/": page([paymentsPrefix]),
    "GET /api/v1/clusters/": page([cluster()]),
    [`GET ${BASE}/versions`]: json(200, [1, 2, 3]),
    [`GET ${BASE}/versions/1`]: versionAnswer(1),
    [`GET ${BASE}/versions/2`]: versionAnswer(2),
    [`GET ${BASE}/versions/3`]: versionAnswer(3),
    [`GET ${REGISTRY}/config/${SUBJECT}`]: json(200, { compatibilityLevel: "FORWARD_TRANSITIVE" }),
    ...extra,
  });
}

const renderSubject = (path = `/schemas/3/${SUBJECT}`) =>
  renderPage(<SchemaSubjectPage />, "/schemas/:cluster/:subject", path);

describe("SchemaSubjectPage", { timeout: 30_000 }, () => {
  it("lists the versions, shows the latest, and shows an earlier one on request", async () => {
    const fetchSpy = stubSubject("viewer");
    const { user } = renderSubject();

    expect(await screen.findByRole("heading", { level: 1, name: SUBJECT })).toBeInTheDocument();
    expect(screen.getByText(/Used for the keys of topic/)).toHaveTextContent("payments.refunds");
    expect(await screen.findByRole("link", { name: "orders" })).toHaveAttribute("href", "/schemas?cluster=3");
    const versions = await screen.findByRole("region", { name: "Versions" });
    expect(within(versions).getByText("3 versions: 1, 2, 3")).toBeInTheDocument();
    expect(await within(versions).findByLabelText("Schema of version 3")).toHaveTextContent('"cents"');
    expect(within(versions).getByText(/Schema id 203/)).toHaveTextContent("AVRO");

    await user.selectOptions(within(versions).getByLabelText("Show version"), "1");
    const first = await within(versions).findByLabelText("Schema of version 1");
    expect(first).toHaveTextContent('"name": "id"');
    expect(first).not.toHaveTextContent("refund_id");
    expect(requestsOf(fetchSpy).some((request) => request.url.endsWith(`${BASE}/versions/1`))).toBe(true);
  });

  it("compares the two latest versions by default and any two chosen ones", async () => {
    stubSubject("viewer");
    const { user } = renderSubject();

    const latestPair = await screen.findByRole("table", { name: "Version 2 compared with version 3" });
    const kinds = [...latestPair.querySelectorAll("tr")].map((row) => row.getAttribute("data-kind"));
    expect(kinds).toContain("added");
    expect(kinds).not.toContain("removed");

    await user.selectOptions(screen.getByLabelText("From"), "1");
    const renamed = await screen.findByRole("table", { name: "Version 1 compared with version 3" });
    const changed = [...renamed.querySelectorAll('tr[data-kind="changed"]')];
    expect(changed.length).toBeGreaterThan(0);
    expect(changed[0]).toHaveTextContent('"name": "id"');
    expect(changed[0]).toHaveTextContent('"name": "refund_id"');
  });

  it("has nothing to compare for a subject with one version", async () => {
    stubSubject("viewer", { [`GET ${BASE}/versions`]: json(200, [1]) });
    renderSubject();

    expect(await screen.findByText("1 version: 1")).toBeInTheDocument();
    expect(await screen.findByLabelText("Schema of version 1")).toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "Compare versions" })).not.toBeInTheDocument();
  });

  it("shows the subject's compatibility level, editable only by a writer", async () => {
    stubSubject("viewer");
    renderSubject();
    const readOnly = await screen.findByRole("region", { name: "Compatibility" });
    expect(await within(readOnly).findByText("FORWARD_TRANSITIVE")).toBeInTheDocument();
    expect(within(readOnly).queryByLabelText("Compatibility level")).not.toBeInTheDocument();
  });

  it("lets a developer of the subject's prefix pick another level, starting from the current one", async () => {
    stubSubject("developer");
    renderSubject();
    const editable = await screen.findByRole("region", { name: "Compatibility" });
    expect(await within(editable).findByLabelText("Compatibility level")).toHaveValue("FORWARD_TRANSITIVE");
    expect(within(editable).getByRole("button", { name: "Save level" })).toBeDisabled();
  });

  it("shows a version that fails to load as an error in its section only", async () => {
    stubSubject("viewer", { [`GET ${BASE}/versions/3`]: json(500, { error_code: 50001, message: "store down" }) });
    renderSubject();

    const versions = await screen.findByRole("region", { name: "Versions" });
    expect(await within(versions).findByRole("alert")).toHaveTextContent("Could not load this version");
    expect(within(versions).getByRole("alert")).toHaveTextContent("store down");
    const compatibility = screen.getByRole("region", { name: "Compatibility" });
    expect(await within(compatibility).findByText("FORWARD_TRANSITIVE")).toBeInTheDocument();
  });

  it("shows the not-found page for an address without a valid cluster", async () => {
    stubSubject("viewer");
    renderSubject(`/schemas/zero/${SUBJECT}`);
    expect(await screen.findByRole("heading", { level: 1, name: "Page not found" })).toBeInTheDocument();
  });
});
