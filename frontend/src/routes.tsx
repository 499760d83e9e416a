import type { QueryClient } from "@tanstack/react-query";
import { redirect, type RouteObject } from "react-router";

import { sessionQueryOptions } from "./api/hooks/session";
import { safeNextPath } from "./auth/nextPath";
import { LoadingState } from "./components/states";
import { AppLayout } from "./layout/AppLayout";
import { NAV_ITEMS, type NavPath } from "./layout/navigation";
import { NotFoundPage } from "./pages/NotFoundPage";
import { RouteErrorPage } from "./pages/RouteErrorPage";

/** The page of every sidebar section; a NAV_ITEMS entry without one here does not type-check. */
const PAGES: Record<NavPath, NonNullable<RouteObject["lazy"]>> = {
  "/": async () => ({ Component: (await import("./pages/OverviewPage")).OverviewPage }),
  "/teams": async () => ({ Component: (await import("./pages/TeamsPage")).TeamsPage }),
  "/people": async () => ({ Component: (await import("./pages/PeoplePage")).PeoplePage }),
  "/service-accounts": async () => ({
    Component: (await import("./pages/ServiceAccountsPage")).ServiceAccountsPage,
  }),
  "/audit": async () => ({ Component: (await import("./pages/AuditLogPage")).AuditLogPage }),
  "/alerts": async () => ({ Component: (await import("./pages/AlertsPage")).AlertsPage }),
  "/clusters": async () => ({ Component: (await import("./pages/ClustersPage")).ClustersPage }),
  "/schemas": async () => ({ Component: (await import("./pages/SchemasPage")).SchemasPage }),
  "/groups": async () => ({ Component: (await import("./pages/GroupsPage")).GroupsPage }),
  "/jobs": async () => ({ Component: (await import("./pages/JobsPage")).JobsPage }),
  "/connectors": async () => ({ Component: (await import("./pages/ConnectorsPage")).ConnectorsPage }),
  "/replication": async () => ({ Component: (await import("./pages/ReplicationPage")).ReplicationPage }),
  "/topics": async () => ({ Component: (await import("./pages/TopicsPage")).TopicsPage }),
  "/acls": async () => ({ Component: (await import("./pages/AclsPage")).AclsPage }),
  "/quotas": async () => ({ Component: (await import("./pages/QuotasPage")).QuotasPage }),
  "/settings": async () => ({ Component: (await import("./pages/SettingsPage")).SettingsPage }),
};

/** Pages below a section, e.g. one team. */
const DETAIL_PAGES: RouteObject[] = [
  { path: "profile", lazy: async () => ({ Component: (await import("./pages/ProfilePage")).ProfilePage }) },
  { path: "alerts/:tab", lazy: async () => ({ Component: (await import("./pages/AlertsPage")).AlertsPage }) },
  { path: "teams/:id", lazy: async () => ({ Component: (await import("./pages/TeamDetailPage")).TeamDetailPage }) },
  {
    path: "service-accounts/:id",
    lazy: async () => ({ Component: (await import("./pages/ServiceAccountDetailPage")).ServiceAccountDetailPage }),
  },
  {
    path: "clusters/:id",
    lazy: async () => ({ Component: (await import("./pages/ClusterDetailPage")).ClusterDetailPage }),
  },
  {
    path: "clusters/:id/:tab",
    lazy: async () => ({ Component: (await import("./pages/ClusterDetailPage")).ClusterDetailPage }),
  },
  {
    path: "clusters/:id/brokers/:nodeId",
    lazy: async () => ({ Component: (await import("./pages/BrokerDetailPage")).BrokerDetailPage }),
  },
  {
    path: "topics/:id",
    lazy: async () => ({ Component: (await import("./pages/TopicDetailPage")).TopicDetailPage }),
  },
  {
    path: "topics/:id/messages",
    lazy: async () => ({ Component: (await import("./pages/TopicDetailPage")).TopicDetailPage }),
  },
  { path: "groups/:id", lazy: async () => ({ Component: (await import("./pages/GroupDetailPage")).GroupDetailPage }) },
  { path: "jobs/:id", lazy: async () => ({ Component: (await import("./pages/JobRunPage")).JobRunPage }) },
  {
    path: "jobs/streams/:id",
    lazy: async () => ({ Component: (await import("./pages/StreamingJobPage")).StreamingJobPage }),
  },
  {
    path: "schemas/:cluster/:subject",
    lazy: async () => ({ Component: (await import("./pages/SchemaSubjectPage")).SchemaSubjectPage }),
  },
];

/**
 * The console's routes. Pages are code-split and fetched on first visit. The
 * loaders only warm the session cache so the first render is not a spinner;
 * the decision to redirect lives in RequireAuth and the login loader.
 */
export function buildRoutes(queryClient: QueryClient): RouteObject[] {
  const loadSession = () => queryClient.ensureQueryData(sessionQueryOptions()).catch(() => null);

  const sections: RouteObject[] = NAV_ITEMS.map((item) => {
    const location = item.path === "/" ? { index: true as const } : { path: item.path.slice(1) };
    return { ...location, lazy: PAGES[item.path] };
  });

  return [
    {
      errorElement: <RouteErrorPage />,
      // Shown while the first loaders (the session check) run.
      hydrateFallbackElement: <LoadingState label="Loading the console…" />,
      children: [
        {
          path: "login",
          loader: async ({ request }) => {
            const session = await loadSession();
            if (session?.authenticated) {
              throw redirect(safeNextPath(new URL(request.url).searchParams.get("next")));
            }
            return null;
          },
          lazy: async () => ({ Component: (await import("./pages/LoginPage")).LoginPage }),
        },
        {
          // An invitation or reset link; signed in or not, the link decides whose password is set.
          path: "set-password",
          loader: async () => {
            await loadSession(); // the CSRF cookie its POSTs need
            return null;
          },
          lazy: async () => ({ Component: (await import("./pages/SetPasswordPage")).SetPasswordPage }),
        },
        {
          path: "/",
          loader: async () => {
            await loadSession();
            return null;
          },
          element: <AppLayout />,
          children: [...sections, ...DETAIL_PAGES, { path: "*", element: <NotFoundPage /> }],
        },
      ],
    },
  ];
}
