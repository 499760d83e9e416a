import { useQuery } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type { Organization } from "../types";

export const organizationKeys = {
  all: ["organizations"] as const,
  list: () => [...organizationKeys.all, "list"] as const,
};

/** The organizations the caller belongs to, to name them in pickers. */
export function useOrganizations() {
  return useQuery({
    queryKey: organizationKeys.list(),
    queryFn: ({ signal }): Promise<Organization[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/organizations/", { params: { query: { offset, limit } }, signal })),
      ),
  });
}
