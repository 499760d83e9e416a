import { useState } from "react";
import { Link, useLocation, useNavigate, useParams } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { useAccess } from "../api/hooks/access";
import { useClusters } from "../api/hooks/clusters";
import { describeError } from "../api/errors";
import { useDeleteTeam, useTeam } from "../api/hooks/teams";
import type { Team } from "../api/types";
import { can, isOrgAdmin, ROLE_LABELS, roleInTeam } from "../auth/permissions";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { Dialog } from "../components/Dialog";
import { PageHeader } from "../components/PageHeader";
import { QueryView } from "../components/states";
import { NotFoundPage } from "./NotFoundPage";
import { MembersSection } from "./teams/MembersSection";
import { PolicySection } from "./teams/PolicySection";
import { PrefixesSection } from "./teams/PrefixesSection";
import { EditTeamForm, type TeamPageState } from "./teams/TeamForms";
import { CreateTopicForm } from "./topics/CreateTopicForm";

export function TeamDetailPage() {
  const id = Number(useParams().id);
  if (!Number.isInteger(id) || id <= 0) return <NotFoundPage />;
  return <TeamDetail id={id} />;
}

function TeamDetail({ id }: { id: number }) {
  const team = useTeam(id);
  const access = useAccess();
  const prefixError = (useLocation().state as TeamPageState | null)?.prefixError;
  const clusters = useClusters();
  const [action, setAction] = useState<"create-topic" | "edit" | "delete" | null>(null);

  return (
    <QueryView query={combineQueries(team, access)} errorTitle="Could not load the team">
      {([teamData, accessData]) => {
        const role = roleInTeam(accessData, teamData);
        const orgAdmin = isOrgAdmin(accessData, teamData.organization);
        return (
          <>
            <PageHeader
              title={teamData.name}
              actions={
                <div className="actions">
                  {can.manageTopics(role) ? (
                    <button type="button" className="button button--primary" onClick={() => setAction("create-topic")}>
                      Create topic
                    </button>
                  ) : null}
                  {role === "team_admin" ? (
                    <button type="button" className="button" onClick={() => setAction("edit")}>
                      Edit team
                    </button>
                  ) : null}
                  {orgAdmin ? (
                    <button type="button" className="button button--danger" onClick={() => setAction("delete")}>
                      Delete team
                    </button>
                  ) : null}
                </div>
              }
              description={
                <>
                  {withFullStop(teamData.description || "No description.")} Your role:{" "}
                  <strong>{role ? ROLE_LABELS[role] : "none"}</strong>.{" "}
                  <Link to={`/service-accounts?team=${teamData.id}`}>Service accounts</Link>
                </>
              }
            />
            {prefixError ? (
              <p className="callout callout--warning" role="alert">
                The team was created, but its prefix was refused: {prefixError} Add another one below.
              </p>
            ) : null}
            <MembersSection team={teamData} role={role} />
            <PrefixesSection team={teamData} canManage={orgAdmin} />
            <PolicySection team={teamData} canEdit={orgAdmin} />
            <Dialog open={action === "create-topic"} title="Create topic" onClose={() => setAction(null)}>
              <CreateTopicForm teams={[teamData]} clusters={clusters.data ?? []} onCancel={() => setAction(null)} />
            </Dialog>
            <Dialog open={action === "edit"} title="Edit team" onClose={() => setAction(null)}>
              <EditTeamForm team={teamData} onDone={() => setAction(null)} />
            </Dialog>
            <DeleteTeamDialog team={teamData} open={action === "delete"} onClose={() => setAction(null)} />
          </>
        );
      }}
    </QueryView>
  );
}

function DeleteTeamDialog({ team, open, onClose }: { team: Team; open: boolean; onClose: () => void }) {
  const navigate = useNavigate();
  const deletion = useDeleteTeam();
  return (
    <ConfirmDialog
      open={open}
      title={`Delete the team ${team.name}?`}
      description="Its members, prefixes and policy go with it; its topics stay on their clusters, unowned. A team with service accounts cannot be deleted until they are."
      confirmationText={team.name}
      confirmLabel="Delete team"
      pending={deletion.isPending}
      error={deletion.isError ? describeError(deletion.error) : null}
      onCancel={() => {
        deletion.reset();
        onClose();
      }}
      onConfirm={() => deletion.mutate(team.id, { onSuccess: () => navigate("/teams", { replace: true }) })}
    />
  );
}

function withFullStop(text: string): string {
  return /[.!?]$/.test(text.trim()) ? text : `${text}.`;
}
