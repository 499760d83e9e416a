import { keepPreviousData, useQuery } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import type { AuditEvent, AuditEventFilters, Page } from "../types";

export type AuditEventQuery = Pick<
  AuditEventFilters,
  "actor" | "action" | "resource_type" | "team" | "since" | "until" | "limit" | "offset"
>;

export const auditEventKeys = {
  all: ["audit-events"] as const,
  list: (query: AuditEventQuery) => [...auditEventKeys.all, "list", query] as const,
};

/** One page of the audit log, newest first; the previous page stays on screen while the next loads. */
export function useAuditEvents(query: AuditEventQuery) {
  return useQuery({
    queryKey: auditEventKeys.list(query),
    queryFn: async ({ signal }): Promise<Page<AuditEvent>> =>
      unwrap(
        await apiClient.GET("/api/v1/audit-events/", {
          params: { query: { ...query } },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
}
