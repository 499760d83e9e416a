import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { acme, cluster } from "../test/clusterFixtures";
import { json, stubFetch } from "../test/fetchStub";
import { renderPage } from "../test/renderPage";
import { membership, page, paymentsPrefix, signedInHandlers } from "../test/tenancyFixtures";
import { SchemaSubjectPage } from "./SchemaSubjectPage";

const SUBJECT = "payments.refunds-value";
const VERSIONS = `/clusters/3/schema-registry/subjects/${SUBJECT}/versions`;

describe("SchemaSubjectPage after every version is soft-deleted", () => {
  it("shows no live versions instead of an error and offers the permanent delete", async () => {
    stubFetch({
      ...signedInHandlers({ teamRoles: [membership(9, 1, "me", "developer")] }),
      "GET /api/v1/organizations/": page([acme]),
      "GET /api/v1/prefixes/": page([paymentsPrefix]),
      "GET /api/v1/clusters/": page([cluster()]),
      [`GET ${VERSIONS}`]: (request) =>
        new URL(request.url).searchParams.get("deletedOnly") === "true"
          ? json(200, [1, 2])
          : json(404, { error_code: 40401, message: `Subject '${SUBJECT}' not found.` }),
    });
    renderPage(<SchemaSubjectPage />, "/schemas/:cluster/:subject", `/schemas/3/${SUBJECT}`);

    expect(await screen.findByText("No live versions")).toBeInTheDocument();
    expect(await screen.findByRole("button", { name: "Permanently delete subject" })).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Delete subject" })).not.toBeInTheDocument();
    expect(screen.queryByText("Could not load the subject")).not.toBeInTheDocument();
  });
});
