import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";
import { Link } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { useAccess } from "../api/hooks/access";
import { useMemberships } from "../api/hooks/memberships";
import { useOrganizations } from "../api/hooks/organizations";
import { usePrefixes } from "../api/hooks/prefixes";
import { useTeams } from "../api/hooks/teams";
import type { Team } from "../api/types";
import { isOrgAdmin } from "../auth/permissions";
import { DataTable } from "../components/DataTable";
import { Dialog } from "../components/Dialog";
import { PageHeader } from "../components/PageHeader";
import { EmptyState, QueryView } from "../components/states";
import { CreateTeamForm } from "./teams/TeamForms";

interface TeamRow {
  team: Team;
  members: number;
  prefixes: string;
}

const column = createColumnHelper<TeamRow>();
const columns = [
  column.accessor((row) => row.team.name, {
    id: "name",
    header: "Name",
    cell: (info) => <Link to={`/teams/${info.row.original.team.id}`}>{info.getValue()}</Link>,
  }),
  column.accessor("members", { header: "Members" }),
  column.accessor("prefixes", {
    header: "Prefixes",
    cell: (info) => <span className="mono">{info.getValue() || "—"}</span>,
  }),
];

export function TeamsPage() {
  const teams = useTeams();
  const memberships = useMemberships();
  const prefixes = usePrefixes();
  const all = combineQueries(teams, memberships, prefixes);
  const access = useAccess();
  const organizations = useOrganizations();
  const [creating, setCreating] = useState(false);
  const administered = (organizations.data ?? []).filter(
    (organization) => access.data && isOrgAdmin(access.data, organization.id),
  );
  const canCreate = administered.length > 0;

  return (
    <>
      <PageHeader
        title="Teams"
        description="Who owns what: members, name prefixes and limits per team."
        actions={
          canCreate ? (
            <button type="button" className="button button--primary" onClick={() => setCreating(true)}>
              Create team
            </button>
          ) : null
        }
      />
      <QueryView
        query={all}
        errorTitle="Could not load the teams"
        isEmpty={([teamList]) => teamList.length === 0}
        empty={
          <EmptyState
            title="No teams yet"
            description={
              canCreate
                ? "Create a team, give it a name prefix, and its members can create topics under it."
                : "An organization admin creates teams."
            }
          />
        }
      >
        {([teamList, membershipList, prefixList]) => {
          const rows = teamList.map((team) => ({
            team,
            members: membershipList.filter((membership) => membership.team === team.id).length,
            prefixes: prefixList
              .filter((prefix) => prefix.team === team.id)
              .map((prefix) => `${prefix.resource_type}:${prefix.prefix}`)
              .join(", "),
          }));
          return <DataTable label="Teams" columns={columns} rows={rows} getRowId={(row) => String(row.team.id)} />;
        }}
      </QueryView>
      <Dialog open={creating} title="Create team" onClose={() => setCreating(false)}>
        <CreateTeamForm organizations={administered} onCancel={() => setCreating(false)} />
      </Dialog>
    </>
  );
}
