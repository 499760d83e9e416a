import type { ConsumerGroup } from "../../api/hooks/groups";
import type { Cluster, Team } from "../../api/types";
import { hasRole, isOrgAdmin, roleInTeam, type Access } from "../../auth/permissions";

/**
 * Resetting offsets needs a developer of the group's team; a group no team owns belongs to its
 * cluster's organization admins (controlplane/groups/services.py, _require_group_role).
 */
export function canResetOffsets(
  access: Access,
  group: Pick<ConsumerGroup, "team" | "cluster">,
  teams: readonly Team[],
  clusters: readonly Cluster[],
): boolean {
  if (group.team != null) {
    const team = teams.find((candidate) => candidate.id === group.team);
    return team !== undefined && hasRole(roleInTeam(access, team), "developer");
  }
  const cluster = clusters.find((candidate) => candidate.id === group.cluster);
  return cluster !== undefined && isOrgAdmin(access, cluster.organization);
}
