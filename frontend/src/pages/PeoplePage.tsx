import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";

import { combineQueries } from "../api/combineQueries";
import { describeError } from "../api/errors";
import { useAccess } from "../api/hooks/access";
import { useOrganizations } from "../api/hooks/organizations";
import { useIssuePasswordLink, usePeople, useSetPersonActive } from "../api/hooks/people";
import { useSession } from "../api/hooks/session";
import { useTeams } from "../api/hooks/teams";
import type { IssuedLink, Person } from "../api/types";
import { isOrgAdmin, ROLE_LABELS } from "../auth/permissions";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { DataTable } from "../components/DataTable";
import { Dialog } from "../components/Dialog";
import { PageHeader } from "../components/PageHeader";
import { Timestamp } from "../components/Timestamp";
import { EmptyState, QueryView } from "../components/states";
import { InvitePersonForm } from "./people/InvitePersonForm";
import { PasswordLinkDialog } from "./people/PasswordLinkDialog";
import { PersonStatusBadge, SOURCE_LABELS } from "./people/PersonStatusBadge";
import { PersonTeamsDrawer } from "./people/PersonTeamsDrawer";

const column = createColumnHelper<Person>();

export function PeoplePage() {
  const access = useAccess();
  const session = useSession();
  const organizations = useOrganizations();
  const administered = (organizations.data ?? []).filter(
    (organization) => access.data && isOrgAdmin(access.data, organization.id),
  );
  const isAdmin = administered.length > 0;
  const people = usePeople({ enabled: isAdmin });
  const teams = useTeams();
  const [inviting, setInviting] = useState(false);
  const [issued, setIssued] = useState<{ username: string; link: IssuedLink } | null>(null);
  const [editing, setEditing] = useState<Person | null>(null);
  const [deactivating, setDeactivating] = useState<Person | null>(null);
  const setActive = useSetPersonActive();
  const issueLink = useIssuePasswordLink();

  const columns = [
    column.accessor("username", {
      header: "Person",
      cell: (info) => {
        const person = info.row.original;
        return (
          <span>
            <button
              type="button"
              className="link-button"
              aria-label={`Teams of ${info.getValue()}`}
              onClick={() => setEditing(person)}
            >
              <strong>{info.getValue()}</strong>
            </button>{" "}
            {person.is_superuser ? <span className="badge badge--info">platform admin</span> : null}
            {person.identity_source !== "local" ? (
              <span className="badge">{SOURCE_LABELS[person.identity_source]}</span>
            ) : null}
            <br />
            <span className="muted">{person.email || "no e-mail"}</span>
          </span>
        );
      },
    }),
    column.accessor("status", {
      header: "Status",
      cell: (info) => <PersonStatusBadge person={info.row.original} />,
    }),
    column.accessor(
      (person) => person.teams.map((team) => `${team.team_name} (${ROLE_LABELS[team.role]})`).join(", "),
      {
        id: "teams",
        header: "Teams and roles",
        cell: (info) => {
          const person = info.row.original;
          const admin = person.organizations.some((organization) => organization.is_org_admin);
          return (
            <span>
              {admin ? <span className="badge">org admin</span> : null} {info.getValue() || (admin ? "" : "—")}
            </span>
          );
        },
      },
    ),
    column.accessor("last_login", {
      header: "Last sign-in",
      cell: (info) => (info.getValue() ? <Timestamp value={info.getValue() as string} relative /> : "never"),
    }),
    column.display({
      id: "actions",
      header: () => <span className="visually-hidden">Actions</span>,
      cell: (info) => {
        const person = info.row.original;
        const local = person.identity_source === "local";
        // The server refuses people acting on their own account; another admin does it.
        if (person.username === session.data?.user?.username) return <span className="muted">you</span>;
        return (
          <div className="actions actions--wrap">
            {person.status !== "deactivated" && local ? (
              <button
                type="button"
                className="button"
                disabled={issueLink.isPending}
                onClick={() =>
                  issueLink.mutate(person.id, { onSuccess: (link) => setIssued({ username: person.username, link }) })
                }
              >
                {person.status === "invited" ? "New invite link" : "Reset password"}
              </button>
            ) : null}
            {person.status === "deactivated" ? (
              <button
                type="button"
                className="button"
                disabled={setActive.isPending}
                onClick={() => setActive.mutate({ id: person.id, active: true })}
              >
                Reactivate
              </button>
            ) : (
              <button type="button" className="button button--danger" onClick={() => setDeactivating(person)}>
                Deactivate
              </button>
            )}
          </div>
        );
      },
    }),
  ];

  const actionError = issueLink.isError ? issueLink.error : setActive.isError && !deactivating ? setActive.error : null;

  return (
    <>
      <PageHeader
        title="People"
        description="Who signs in to the console: invite people, give them team roles, reset passwords, end access."
        actions={
          isAdmin ? (
            <button type="button" className="button button--primary" onClick={() => setInviting(true)}>
              Invite person
            </button>
          ) : null
        }
      />
      {actionError ? (
        <p className="form-error" role="alert">
          {describeError(actionError)}
        </p>
      ) : null}
      {access.data && organizations.data && !isAdmin ? (
        <EmptyState
          title="Only organization admins manage people"
          description="Ask an admin of your organization to invite someone or change a role."
        />
      ) : (
        <QueryView
          query={combineQueries(people, teams)}
          errorTitle="Could not load the people"
          isEmpty={([list]) => list.length === 0}
          empty={<EmptyState title="Nobody here yet" description="Invite the first person." />}
        >
          {([list]) => <DataTable label="People" columns={columns} rows={list} getRowId={(row) => String(row.id)} />}
        </QueryView>
      )}
      <Dialog open={inviting} title="Invite person" onClose={() => setInviting(false)}>
        <InvitePersonForm
          organizations={administered}
          teams={teams.data ?? []}
          onCancel={() => setInviting(false)}
          onCreated={(created) => {
            setInviting(false);
            if (created.link) setIssued({ username: created.person.username, link: created.link });
          }}
        />
      </Dialog>
      <PasswordLinkDialog issued={issued} onClose={() => setIssued(null)} />
      {editing ? (
        <PersonTeamsDrawer
          personId={editing.id}
          people={people.data ?? []}
          teams={(teams.data ?? []).filter((team) => administered.some((org) => org.id === team.organization))}
          onClose={() => setEditing(null)}
        />
      ) : null}
      <ConfirmDialog
        open={deactivating !== null}
        title={`Deactivate ${deactivating?.username ?? ""}?`}
        description="They are signed out at once and their personal API keys stop working. Their team roles stay, so reactivating restores the same access."
        confirmationText={deactivating?.username ?? ""}
        confirmLabel="Deactivate"
        pending={setActive.isPending}
        error={setActive.isError ? describeError(setActive.error) : null}
        onCancel={() => {
          setActive.reset();
          setDeactivating(null);
        }}
        onConfirm={() =>
          deactivating &&
          setActive.mutate({ id: deactivating.id, active: false }, { onSuccess: () => setDeactivating(null) })
        }
      />
    </>
  );
}
