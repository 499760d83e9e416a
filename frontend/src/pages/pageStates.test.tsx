import { configure, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { NAV_ITEMS } from "../layout/navigation";
import { acme, cluster, clusterDetail } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch, type StubbedResponse } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { membership, page, payments, signedInHandlers } from "../test/tenancyFixtures";
import { browseResult, topicDetail } from "../test/topicFixtures";

// Every case loads a lazy page on a shared, sometimes slow machine.
configure({ asyncUtilTimeout: 10_000 });

type Handlers = Parameters<typeof stubFetch>[0];

const SUBJECT = "payments.card-value";
const REGISTRY = "/clusters/3/schema-registry";

interface PageCase {
  page: string;
  path: string;
  /** The request whose answer the page is about: held back, emptied or failed. */
  main: string;
  /** What the page shows while `main` is pending (the label of its LoadingState). */
  loading: string;
  /** A list page's empty answer and the text it shows for it; detail pages get a 404 instead. */
  empty?: { answer: StubbedResponse; text: string };
  /** Answers for the page's other requests that are not an empty list page. */
  handlers?: Handlers;
  /** The schema registry answers errors in Confluent's shape rather than the API's. */
  registry?: true;
}

const emptyPage = page([]);
const overview = json(200, { version: "0.4.1", worker: { alive: true, last_heartbeat: null } });

/** The sidebar's pages: each asked for its main list. */
const LIST_PAGES: PageCase[] = [
  {
    page: "Overview",
    path: "/",
    main: "GET /api/v1/clusters/",
    loading: "Loading…",
    empty: { answer: emptyPage, text: "No clusters yet" },
    handlers: { "GET /api/v1/overview/": overview },
  },
  {
    page: "Clusters",
    path: "/clusters",
    main: "GET /api/v1/clusters/",
    loading: "Loading…",
    empty: { answer: emptyPage, text: "No clusters yet" },
  },
  {
    page: "Topics",
    path: "/topics",
    main: "GET /api/v1/topics/",
    loading: "Loading topics…",
    empty: { answer: emptyPage, text: "No topics yet" },
  },
  {
    page: "Consumer groups",
    path: "/groups",
    main: "GET /api/v1/consumer-groups/",
    loading: "Loading…",
    empty: { answer: emptyPage, text: "No consumer groups yet" },
  },
  {
    page: "ACLs",
    path: "/acls",
    main: "GET /api/v1/acls/",
    loading: "Loading…",
    empty: { answer: emptyPage, text: "No ACL bindings yet" },
  },
  {
    page: "Quotas",
    path: "/quotas",
    main: "GET /api/v1/quotas/",
    loading: "Loading…",
    empty: { answer: emptyPage, text: "No quotas yet" },
  },
  {
    page: "Schemas",
    path: "/schemas",
    main: `GET ${REGISTRY}/schemas`,
    loading: "Loading…",
    empty: { answer: json(200, []), text: "No subjects yet" },
    registry: true,
  },
  {
    page: "Service accounts",
    path: "/service-accounts",
    main: "GET /api/v1/service-accounts/",
    loading: "Loading…",
    empty: { answer: emptyPage, text: "No service accounts yet" },
  },
  {
    page: "Teams",
    path: "/teams",
    main: "GET /api/v1/teams/",
    loading: "Loading…",
    empty: { answer: emptyPage, text: "No teams yet" },
  },
  {
    page: "Jobs",
    path: "/jobs",
    main: "GET /api/v1/job-runs/",
    loading: "Loading…",
    empty: { answer: emptyPage, text: "No runs yet" },
    handlers: { "GET /api/v1/job-runs/catalog/": json(200, []) },
  },
  {
    page: "Connectors",
    path: "/connectors",
    main: "GET /api/v1/connectors/",
    loading: "Loading…",
    empty: { answer: emptyPage, text: "No connectors yet" },
    handlers: { "GET /api/v1/connect-clusters/": emptyPage, "GET /api/v1/clusters/": emptyPage },
  },
  {
    page: "Replication",
    path: "/replication",
    main: "GET /api/v1/replication-flows/",
    loading: "Loading…",
    empty: { answer: emptyPage, text: "No replication flows yet" },
    handlers: {
      "GET /api/v1/connect-clusters/": emptyPage,
      "GET /api/v1/clusters/": emptyPage,
      "GET /api/v1/teams/": emptyPage,
    },
  },
  {
    page: "Alerts",
    path: "/alerts",
    main: "GET /api/v1/alerts/",
    loading: "Loading…",
    empty: { answer: emptyPage, text: "Nothing is firing" },
  },
  {
    page: "Audit log",
    path: "/audit",
    main: "GET /api/v1/audit-events/",
    loading: "Loading…",
    empty: { answer: emptyPage, text: "No events match" },
  },
];

/** Pages below a section (routes.tsx DETAIL_PAGES), each asked for its one object. */
const DETAIL_PAGES: PageCase[] = [
  { page: "team", path: "/teams/1", main: "GET /api/v1/teams/1/", loading: "Loading…" },
  {
    page: "service account",
    path: "/service-accounts/20",
    main: "GET /api/v1/service-accounts/20/",
    loading: "Loading…",
  },
  { page: "cluster", path: "/clusters/3", main: "GET /api/v1/clusters/3/", loading: "Loading…" },
  { page: "topic", path: "/topics/30", main: "GET /api/v1/topics/30/", loading: "Asking the cluster about the topic…" },
  {
    page: "topic messages",
    path: "/topics/30/messages",
    main: "GET /api/v1/topics/30/messages/",
    loading: "Reading messages…",
    empty: { answer: json(200, browseResult()), text: "No messages" },
    handlers: { "GET /api/v1/topics/30/": json(200, topicDetail()) },
  },
  {
    page: "consumer group",
    path: "/groups/31",
    main: "GET /api/v1/consumer-groups/31/",
    loading: "Asking the cluster about the group…",
  },
  { page: "job run", path: "/jobs/12", main: "GET /api/v1/job-runs/12/", loading: "Loading…" },
  {
    page: "schema subject",
    path: `/schemas/3/${SUBJECT}`,
    main: `GET ${REGISTRY}/subjects/${SUBJECT}/versions`,
    loading: "Loading…",
    registry: true,
  },
  {
    page: "alerts tab",
    path: "/alerts/rules",
    main: "GET /api/v1/alert-rules/",
    loading: "Loading…",
    empty: { answer: emptyPage, text: "No alert rules yet" },
  },
];

const serverError = (testCase: PageCase) =>
  testCase.registry
    ? json(500, { error_code: 50001, message: "boom" })
    : json(500, { error: { code: "server_error", message: "boom" } });
const notFound = (testCase: PageCase) =>
  testCase.registry
    ? json(404, { error_code: 40401, message: `Subject '${SUBJECT}' not found.` })
    : json(404, { error: { code: "not_found", message: "Not found." } });

/**
 * A signed-in org admin and team admin of Payments. Requests the case does not
 * name answer an empty list page, so each page renders as far as its main request lets it.
 */
function stubPage(testCase: PageCase, main: StubbedResponse | (() => Promise<StubbedResponse>)) {
  return stubFetch(
    {
      ...signedInHandlers({ orgAdminOf: [acme.id], teamRoles: [membership(9, payments.id, "me", "team_admin")] }),
      "GET /api/v1/organizations/": page([acme]),
      "GET /api/v1/teams/": page([payments]),
      "GET /api/v1/clusters/": page([cluster()]),
      "GET /api/v1/clusters/3/": json(200, clusterDetail()),
      ...testCase.handlers,
      [testCase.main]: main,
    },
    emptyPage,
  );
}

const pending = () => new Promise<StubbedResponse>(() => {});

function keyOf(request: Request): string {
  return `${request.method} ${new URL(request.url).pathname}`;
}

/** Waits until every request other than `main` has been answered and the page had a moment to render them. */
async function settleAllBut(spy: ReturnType<typeof stubFetch>, main: string) {
  for (let seen = -1; seen !== spy.mock.calls.length;) {
    seen = spy.mock.calls.length;
    const others = spy.mock.results.filter((_, index) => keyOf(requestsOf(spy)[index]!) !== main);
    await Promise.all(others.map((result) => result.value));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function mainContent() {
  return within(await screen.findByRole("main"));
}

function assertLoadingStates(cases: PageCase[]) {
  it.each(cases)("$page ($path) shows its loading state while its main request is pending", async (testCase) => {
    const spy = stubPage(testCase, pending);
    renderApp(testCase.path);

    await waitFor(() => expect(requestsOf(spy).map(keyOf)).toContain(testCase.main));
    await settleAllBut(spy, testCase.main);
    const main = await mainContent();
    const statuses = main.getAllByRole("status").map((status) => status.textContent);
    expect(statuses).toContain(testCase.loading);
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
  });
}

function assertErrorStates(cases: PageCase[]) {
  it.each(cases)("$page ($path) shows the server's error when its main request fails", async (testCase) => {
    stubPage(testCase, serverError(testCase));
    renderApp(testCase.path);

    const main = await mainContent();
    await waitFor(() =>
      expect(main.getAllByRole("alert").map((alert) => alert.textContent)).toContainEqual(
        expect.stringContaining("boom"),
      ),
    );
    const failed = main.getAllByRole("alert").find((alert) => alert.textContent?.includes("boom"))!;
    expect(within(failed).getByRole("button", { name: "Try again" })).toBeInTheDocument();
  });
}

describe("page states", { timeout: 30_000 }, () => {
  describe("list pages", () => {
    assertLoadingStates(LIST_PAGES);

    it.each(LIST_PAGES)("$page ($path) shows its empty state for an empty answer", async (testCase) => {
      stubPage(testCase, testCase.empty!.answer);
      renderApp(testCase.path);

      const main = await mainContent();
      expect(await main.findByText(testCase.empty!.text)).toBeInTheDocument();
      expect(screen.queryByRole("alert")).not.toBeInTheDocument();
    });

    assertErrorStates(LIST_PAGES);
  });

  describe("detail pages", () => {
    assertLoadingStates(DETAIL_PAGES);

    it.each(DETAIL_PAGES)("$page ($path) shows not-found or its empty state", async (testCase) => {
      stubPage(testCase, testCase.empty?.answer ?? notFound(testCase));
      renderApp(testCase.path);

      const main = await mainContent();
      if (testCase.empty) {
        expect(await main.findByText(testCase.empty.text)).toBeInTheDocument();
      } else {
        expect(await main.findByRole("alert")).toHaveTextContent(/not found/i);
      }
    });

    assertErrorStates(DETAIL_PAGES);
  });

  describe("Settings", () => {
    const settings: PageCase = { page: "Settings", path: "/settings", main: "GET /api/v1/auth/session/", loading: "" };

    it("shows a loading state while the session is checked", async () => {
      stubPage(settings, pending);
      renderApp("/settings");

      expect(await screen.findByRole("status")).toHaveTextContent("Loading the console…");
      expect(screen.queryByRole("heading", { name: "Settings" })).not.toBeInTheDocument();
      expect(screen.queryByRole("alert")).not.toBeInTheDocument();
    });

    it("shows no team roles for a person without any", async () => {
      stubFetch({ ...signedInHandlers({}), "GET /api/v1/teams/": emptyPage });
      renderApp("/settings");

      const profile = await screen.findByRole("region", { name: "Profile" });
      expect(within(profile).getByText("Team roles").nextElementSibling).toHaveTextContent("None");
    });

    it("shows the error when the session cannot be checked", async () => {
      stubPage(settings, serverError(settings));
      renderApp("/settings");

      const alert = await screen.findByRole("alert");
      expect(alert).toHaveTextContent("Could not check your session");
      expect(alert).toHaveTextContent("boom");
      expect(within(alert).getByRole("button", { name: "Try again" })).toBeInTheDocument();
    });
  });
});

describe("navigation", { timeout: 60_000 }, () => {
  it("links every sidebar entry to a real page", async () => {
    stubFetch(
      {
        ...signedInHandlers({ orgAdminOf: [acme.id] }),
        "GET /api/v1/overview/": overview,
        "GET /api/v1/clusters/3/throughput/": json(200, {
          cluster: 3,
          times: [],
          messages_per_second: [],
          by_topic: [],
        }),
        "GET /api/v1/job-runs/catalog/": json(200, []),
        [`GET ${REGISTRY}/schemas`]: json(200, []),
        "GET /api/v1/clusters/": page([cluster()]),
      },
      emptyPage,
    );
    const { router, user } = renderApp("/");

    const nav = within(await screen.findByRole("navigation", { name: "Main" }));
    expect(nav.getAllByRole("link").map((link) => link.textContent)).toEqual(NAV_ITEMS.map((item) => item.label));
    for (const item of NAV_ITEMS) {
      const link = nav.getByRole("link", { name: item.label });
      expect(link).toHaveAttribute("href", item.path);
      await user.click(link);
      await waitFor(() => expect(router.state.location.pathname).toBe(item.path));
      expect(await screen.findByRole("heading", { level: 1, name: item.label })).toBeInTheDocument();
      expect(screen.queryByText("Page not found")).not.toBeInTheDocument();
    }
  });
});
