import { createColumnHelper } from "@tanstack/react-table";
import { useState, type FormEvent } from "react";

import { describeError } from "../../api/errors";
import { useAddMember, useChangeMemberRole, useMemberships, useRemoveMember } from "../../api/hooks/memberships";
import type { Membership, Team, TeamRole } from "../../api/types";
import { can, grantableRoles, hasRole, ROLE_LABELS } from "../../auth/permissions";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { DataTable } from "../../components/DataTable";
import { Field, FormError } from "../../components/Field";
import { Timestamp } from "../../components/Timestamp";
import { QueryView } from "../../components/states";
import { useConfirmedAction } from "../../components/useConfirmedAction";
import { formErrorsOf } from "../../lib/formErrors";
import { removeColumn } from "./removeColumn";

const column = createColumnHelper<Membership>();

interface MembersSectionProps {
  team: Team;
  /** The signed-in person's role in this team. */
  role: TeamRole | null;
}

export function MembersSection({ team, role }: MembersSectionProps) {
  const members = useMemberships({ team: team.id });
  const changeRole = useChangeMemberRole();
  const removal = useConfirmedAction(useRemoveMember(), (member: Membership) => member.id);
  const manage = can.manageMembers(role);
  const grantable = grantableRoles(role);

  const columns = [
    column.accessor("username", { header: "Member" }),
    column.accessor("role", {
      header: "Role",
      cell: (info) => {
        const member = info.row.original;
        // Roles above the caller's own cannot be changed by it.
        if (!manage || !hasRole(role, member.role)) return ROLE_LABELS[member.role];
        return (
          <select
            className="input"
            aria-label={`Role of ${member.username}`}
            value={member.role}
            disabled={changeRole.isPending}
            onChange={(event) => changeRole.mutate({ id: member.id, role: event.target.value as TeamRole })}
          >
            {grantable.map((option) => (
              <option key={option} value={option}>
                {ROLE_LABELS[option]}
              </option>
            ))}
          </select>
        );
      },
    }),
    column.accessor("created_at", { header: "Added", cell: (info) => <Timestamp value={info.getValue()} /> }),
    ...(manage ? [removeColumn(column, removal.ask)] : []),
  ];

  return (
    <section className="section" aria-labelledby="members-heading">
      <h2 id="members-heading" className="section__title">
        Members
      </h2>
      {manage ? <AddMemberForm team={team} roles={grantable} /> : null}
      {changeRole.isError ? (
        <p className="form-error" role="alert">
          {describeError(changeRole.error)}
        </p>
      ) : null}
      <QueryView query={members} errorTitle="Could not load the members">
        {(rows) => (
          <DataTable
            label="Members"
            columns={columns}
            rows={rows}
            getRowId={(row) => String(row.id)}
            emptyTitle="No members yet"
          />
        )}
      </QueryView>
      <ConfirmDialog
        {...removal.dialog}
        title={`Remove ${removal.target?.username ?? ""} from ${team.name}?`}
        description="They lose the access this team gives them at once."
        confirmationText={removal.target?.username ?? ""}
        confirmLabel="Remove"
      />
    </section>
  );
}

function AddMemberForm({ team, roles }: { team: Team; roles: TeamRole[] }) {
  const addMember = useAddMember();
  const [username, setUsername] = useState("");
  const [role, setRole] = useState<TeamRole>("developer");
  const errors = formErrorsOf(addMember.error, ["username", "role"]);

  function submit(event: FormEvent) {
    event.preventDefault();
    addMember.mutate({ team: team.id, username: username.trim(), role }, { onSuccess: () => setUsername("") });
  }

  return (
    <form className="inline-form" onSubmit={submit} aria-label="Add a member">
      <Field label="Username" error={errors.fields.username}>
        {(control) => (
          <input
            {...control}
            className="input"
            required
            autoComplete="off"
            value={username}
            onChange={(event) => setUsername(event.target.value)}
          />
        )}
      </Field>
      <Field label="Role" error={errors.fields.role}>
        {(control) => (
          <select
            {...control}
            className="input"
            value={role}
            onChange={(event) => setRole(event.target.value as TeamRole)}
          >
            {roles.map((option) => (
              <option key={option} value={option}>
                {ROLE_LABELS[option]}
              </option>
            ))}
          </select>
        )}
      </Field>
      <button type="submit" className="button button--primary" disabled={addMember.isPending}>
        Add member
      </button>
      <FormError message={errors.form} />
    </form>
  );
}
