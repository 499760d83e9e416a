export interface NavItem {
  path: string;
  label: string;
}

/** The sidebar, in order. Each entry has a route of the same path. */
export const NAV_ITEMS = [
  { path: "/", label: "Overview" },
  { path: "/clusters", label: "Clusters" },
  { path: "/topics", label: "Topics" },
  { path: "/groups", label: "Consumer groups" },
  { path: "/acls", label: "ACLs" },
  { path: "/quotas", label: "Quotas" },
  { path: "/schemas", label: "Schemas" },
  { path: "/service-accounts", label: "Service accounts" },
  { path: "/teams", label: "Teams" },
  { path: "/people", label: "People" },
  { path: "/jobs", label: "Jobs" },
  { path: "/connectors", label: "Connectors" },
  { path: "/replication", label: "Replication" },
  { path: "/alerts", label: "Alerts" },
  { path: "/audit", label: "Audit log" },
  { path: "/settings", label: "Settings" },
] as const satisfies readonly NavItem[];

/** The path of a sidebar entry; routes.tsx maps every one to its page. */
export type NavPath = (typeof NAV_ITEMS)[number]["path"];
