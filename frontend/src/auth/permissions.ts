/**
 * What the signed-in person may do, mirrored from the control plane's rules
 * (controlplane/tenancy/access.py) so the console offers only actions the API
 * will accept. The API stays the real gate.
 */
import type { TeamRole } from "../api/types";

export interface Access {
  /** Platform administrators administer every organization. */
  isSuperuser: boolean;
  adminOrganizations: ReadonlySet<number>;
  teamRoles: ReadonlyMap<number, TeamRole>;
}

export const ROLE_LABELS: Record<TeamRole, string> = {
  team_admin: "Team admin",
  developer: "Developer",
  viewer: "Viewer",
};

const ROLE_RANK: Record<TeamRole, number> = { viewer: 1, developer: 2, team_admin: 3 };

/** Highest first, the order people expect in a role picker. */
export const ROLES: readonly TeamRole[] = ["team_admin", "developer", "viewer"];

export function isOrgAdmin(access: Access, organization: number): boolean {
  return access.isSuperuser || access.adminOrganizations.has(organization);
}

/** Org admins act as team admins of every team in their organization. */
export function roleInTeam(access: Access, team: { id: number; organization: number }): TeamRole | null {
  if (isOrgAdmin(access, team.organization)) return "team_admin";
  return access.teamRoles.get(team.id) ?? null;
}

export function hasRole(role: TeamRole | null, minimum: TeamRole): boolean {
  return role !== null && ROLE_RANK[role] >= ROLE_RANK[minimum];
}

/** Nobody hands out more than they have: a developer cannot make a team admin. */
export function grantableRoles(role: TeamRole | null): TeamRole[] {
  return ROLES.filter((candidate) => hasRole(role, candidate));
}

/** A team's name prefix, as far as subject ownership needs it. */
export interface OwnedPrefix {
  team: number;
  organization: number;
  resource_type: string;
  prefix: string;
}

/**
 * The person's role on one schema subject of a cluster in `organization`
 * (controlplane/schemas/access.py): a subject belongs to the teams whose topic
 * or subject prefix it starts with (`<topic>-value` starts with the topic);
 * org admins act as team admins on every subject.
 */
export function roleForSubject(
  access: Access,
  organization: number,
  subject: string,
  prefixes: readonly OwnedPrefix[],
): TeamRole | null {
  if (isOrgAdmin(access, organization)) return "team_admin";
  let best: TeamRole | null = null;
  for (const owned of prefixes) {
    if (owned.organization !== organization) continue;
    if (owned.resource_type !== "topic" && owned.resource_type !== "subject") continue;
    if (!subject.startsWith(owned.prefix)) continue;
    const role = access.teamRoles.get(owned.team) ?? null;
    if (role !== null && (best === null || ROLE_RANK[role] > ROLE_RANK[best])) best = role;
  }
  return best;
}

export const can = {
  /** Registering versions and changing a subject's compatibility. */
  writeSubject: (role: TeamRole | null) => hasRole(role, "developer"),
  manageMembers: (role: TeamRole | null) => hasRole(role, "team_admin"),
  manageServiceAccounts: (role: TeamRole | null) => hasRole(role, "developer"),
  deleteServiceAccount: (role: TeamRole | null) => hasRole(role, "team_admin"),
  manageKeys: (role: TeamRole | null) => hasRole(role, "developer"),
  /** Creating, changing, purging and deleting a team's topics, and producing test messages. */
  manageTopics: (role: TeamRole | null) => hasRole(role, "developer"),
  /** ACL bindings, grants from templates, quotas and SCRAM credentials of the team's service accounts. */
  manageAccess: (role: TeamRole | null) => hasRole(role, "developer"),
  /** Org admins read their organization's trail, team admins their team's. */
  readAuditLog: (access: Access) =>
    access.isSuperuser ||
    access.adminOrganizations.size > 0 ||
    [...access.teamRoles.values()].some((role) => role === "team_admin"),
};
