import { useQuery } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type { ManagedResource } from "../types";

export const managedResourceKeys = {
  all: ["managed-resources"] as const,
  list: (kind: string) => [...managedResourceKeys.all, "list", kind] as const,
};

/** Resources of one kind that a file set manages (`streamhub apply`), read once page by page. */
export function useManagedResources(kind: "Topic" | "ServiceAccount" | "AccessGrant" | "Quota") {
  return useQuery({
    queryKey: managedResourceKeys.list(kind),
    queryFn: ({ signal }): Promise<ManagedResource[]> =>
      listAll(async (offset, limit) =>
        unwrap(
          await apiClient.GET("/api/v1/managed-resources/", { params: { query: { kind, offset, limit } }, signal }),
        ),
      ),
  });
}

/** The key a managed resource is found by: cluster id and name (names repeat across clusters). */
export function managedKey(cluster: number | null | undefined, name: string): string {
  return `${cluster ?? ""}/${name}`;
}

/** Managed resources by `managedKey`. */
export function byClusterAndName(resources: readonly ManagedResource[] | undefined): Map<string, ManagedResource> {
  return new Map((resources ?? []).map((resource) => [managedKey(resource.cluster, resource.name), resource]));
}
