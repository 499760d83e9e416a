import { describe, expect, it } from "vitest";

import type { TeamRole } from "../api/types";
import { can, grantableRoles, roleInTeam, type Access } from "./permissions";

function access(options: Partial<Access> = {}): Access {
  return { isSuperuser: false, adminOrganizations: new Set(), teamRoles: new Map<number, TeamRole>(), ...options };
}

describe("permissions", () => {
  it("makes org admins and platform admins team admins of every team in the organization", () => {
    const team = { id: 1, organization: 10 };
    expect(roleInTeam(access({ adminOrganizations: new Set([10]) }), team)).toBe("team_admin");
    expect(roleInTeam(access({ adminOrganizations: new Set([11]) }), team)).toBeNull();
    expect(roleInTeam(access({ isSuperuser: true }), team)).toBe("team_admin");
    expect(roleInTeam(access({ teamRoles: new Map([[1, "viewer"]]) }), team)).toBe("viewer");
  });

  it("never offers a role above the person's own", () => {
    expect(grantableRoles("team_admin")).toEqual(["team_admin", "developer", "viewer"]);
    expect(grantableRoles("developer")).toEqual(["developer", "viewer"]);
    expect(grantableRoles(null)).toEqual([]);
  });

  it("mirrors the API's minimum roles", () => {
    expect(can.manageServiceAccounts("developer")).toBe(true);
    expect(can.manageServiceAccounts("viewer")).toBe(false);
    expect(can.deleteServiceAccount("developer")).toBe(false);
    expect(can.manageMembers("team_admin")).toBe(true);
    expect(can.readAuditLog(access({ teamRoles: new Map([[1, "developer"]]) }))).toBe(false);
    expect(can.readAuditLog(access({ teamRoles: new Map([[1, "team_admin"]]) }))).toBe(true);
  });
});
