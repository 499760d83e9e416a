import { describe, expect, it } from "vitest";

import type { TeamRole } from "../api/types";
import { can, grantableRoles, roleForSubject, roleInTeam, type Access } from "./permissions";

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

describe("roleForSubject", () => {
  const prefixes = [
    { team: 1, organization: 10, resource_type: "topic", prefix: "payments." },
    { team: 2, organization: 10, resource_type: "subject", prefix: "com.acme." },
    { team: 2, organization: 10, resource_type: "group", prefix: "orders." },
    { team: 3, organization: 11, resource_type: "topic", prefix: "payments." },
  ];
  const developerAndViewer = access({
    teamRoles: new Map<number, TeamRole>([
      [1, "developer"],
      [2, "viewer"],
      [3, "team_admin"],
    ]),
  });

  it("gives the owning team's role on subjects under its topic or subject prefixes", () => {
    expect(roleForSubject(developerAndViewer, 10, "payments.card-value", prefixes)).toBe("developer");
    expect(roleForSubject(developerAndViewer, 10, "com.acme.Order", prefixes)).toBe("viewer");
    expect(can.writeSubject(roleForSubject(developerAndViewer, 10, "com.acme.Order", prefixes))).toBe(false);
  });

  it("ignores other organizations' prefixes and non-subject prefix kinds", () => {
    expect(roleForSubject(developerAndViewer, 10, "orders.created-value", prefixes)).toBeNull();
    expect(
      roleForSubject(access({ teamRoles: new Map([[3, "team_admin"]]) }), 10, "payments.x-value", prefixes),
    ).toBeNull();
  });

  it("lets org admins write every subject of their organization", () => {
    expect(roleForSubject(access({ adminOrganizations: new Set([10]) }), 10, "anything", [])).toBe("team_admin");
  });
});
