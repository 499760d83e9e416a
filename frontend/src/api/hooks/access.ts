import { useQuery } from "@tanstack/react-query";

import type { Access } from "../../auth/permissions";
import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import { useSession } from "./session";

export const accessKeys = {
  all: ["access"] as const,
  forUser: (userId: number) => [...accessKeys.all, userId] as const,
};

/**
 * The signed-in person's organizations (as admin) and team roles. The
 * org-memberships list only shows rows to org admins, so an empty answer
 * means "administers none".
 */
export function useAccess() {
  const session = useSession();
  const user = session.data?.user ?? null;
  const query = useQuery({
    queryKey: accessKeys.forUser(user?.id ?? 0),
    enabled: user !== null,
    queryFn: async ({ signal }): Promise<Access> => {
      const username = user?.username ?? "";
      const [orgMemberships, memberships] = await Promise.all([
        listAll(async (offset, limit) =>
          unwrap(
            await apiClient.GET("/api/v1/org-memberships/", {
              params: { query: { username, is_org_admin: true, offset, limit } },
              signal,
            }),
          ),
        ),
        listAll(async (offset, limit) =>
          unwrap(
            await apiClient.GET("/api/v1/memberships/", { params: { query: { username, offset, limit } }, signal }),
          ),
        ),
      ]);
      return {
        isSuperuser: user?.is_superuser ?? false,
        adminOrganizations: new Set(orgMemberships.map((membership) => membership.organization)),
        teamRoles: new Map(memberships.map((membership) => [membership.team, membership.role])),
      };
    },
  });
  return query;
}
