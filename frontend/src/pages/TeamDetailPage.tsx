import { Link, useParams } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { useAccess } from "../api/hooks/access";
import { useTeam } from "../api/hooks/teams";
import { isOrgAdmin, ROLE_LABELS, roleInTeam } from "../auth/permissions";
import { PageHeader } from "../components/PageHeader";
import { QueryView } from "../components/states";
import { NotFoundPage } from "./NotFoundPage";
import { MembersSection } from "./teams/MembersSection";
import { PolicySection } from "./teams/PolicySection";
import { PrefixesSection } from "./teams/PrefixesSection";

export function TeamDetailPage() {
  const id = Number(useParams().id);
  if (!Number.isInteger(id) || id <= 0) return <NotFoundPage />;
  return <TeamDetail id={id} />;
}

function TeamDetail({ id }: { id: number }) {
  const team = useTeam(id);
  const access = useAccess();

  return (
    <QueryView query={combineQueries(team, access)} errorTitle="Could not load the team">
      {([teamData, accessData]) => {
        const role = roleInTeam(accessData, teamData);
        const orgAdmin = isOrgAdmin(accessData, teamData.organization);
        return (
          <>
            <PageHeader
              title={teamData.name}
              description={
                <>
                  {teamData.description || "No description."} Your role:{" "}
                  <strong>{role ? ROLE_LABELS[role] : "none"}</strong>.{" "}
                  <Link to={`/service-accounts?team=${teamData.id}`}>Service accounts</Link>
                </>
              }
            />
            <MembersSection team={teamData} role={role} />
            <PrefixesSection team={teamData} canManage={orgAdmin} />
            <PolicySection team={teamData} canEdit={orgAdmin} />
          </>
        );
      }}
    </QueryView>
  );
}
