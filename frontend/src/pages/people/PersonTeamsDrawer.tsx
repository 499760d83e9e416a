import { useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";

import { describeError } from "../../api/errors";
import { useAddMember, useChangeMemberRole, useRemoveMember } from "../../api/hooks/memberships";
import { peopleKeys, useSetOrgAdmin } from "../../api/hooks/people";
import type { Person, Team, TeamRole } from "../../api/types";
import { ROLE_LABELS, ROLES } from "../../auth/permissions";
import { Dialog } from "../../components/Dialog";
import { Field, FormError } from "../../components/Field";
import { formErrorsOf } from "../../lib/formErrors";

interface PersonTeamsDrawerProps {
  personId: number;
  /** The people list; the drawer shows the person as it is after each change. */
  people: Person[];
  /** Teams the admin may give roles in. */
  teams: Team[];
  onClose: () => void;
}

/** Team roles are shown from the people list, which a membership change makes stale. */
function useRefetchPeople() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: peopleKeys.all });
}

/** One person's team roles: change a role, take them out of a team, add them to another. */
export function PersonTeamsDrawer({ personId, people, teams, onClose }: PersonTeamsDrawerProps) {
  const person = people.find((candidate) => candidate.id === personId);
  const changeRole = useChangeMemberRole();
  const remove = useRemoveMember();
  const refetch = useRefetchPeople();
  const setOrgAdmin = useSetOrgAdmin();
  const error = changeRole.error ?? remove.error ?? setOrgAdmin.error;
  if (!person) return null;
  const memberOf = new Set(person.teams.map((team) => team.team));

  return (
    <Dialog open title={`Teams of ${person.username}`} onClose={onClose} variant="drawer">
      {person.organizations.map((organization) => (
        <label key={organization.membership} className="radio">
          <input
            type="checkbox"
            checked={organization.is_org_admin}
            disabled={setOrgAdmin.isPending}
            onChange={(event) =>
              setOrgAdmin.mutate({ membership: organization.membership, isOrgAdmin: event.target.checked })
            }
          />{" "}
          Admin of {organization.organization_name} (every team, people and clusters)
        </label>
      ))}
      {person.teams.length === 0 ? <p className="muted">Not in any team yet: they see no team's resources.</p> : null}
      <ul className="plain-list" aria-label="Team roles">
        {person.teams.map((team) => (
          <li key={team.membership} className="person-team">
            <span className="person-team__name">{team.team_name}</span>
            <select
              className="input"
              aria-label={`Role in ${team.team_name}`}
              value={team.role}
              disabled={changeRole.isPending}
              onChange={(event) =>
                changeRole.mutate({ id: team.membership, role: event.target.value as TeamRole }, { onSuccess: refetch })
              }
            >
              {ROLES.map((option) => (
                <option key={option} value={option}>
                  {ROLE_LABELS[option]}
                </option>
              ))}
            </select>
            <button
              type="button"
              className="button button--danger"
              disabled={remove.isPending}
              onClick={() => remove.mutate(team.membership, { onSuccess: refetch })}
            >
              Remove from {team.team_name}
            </button>
          </li>
        ))}
      </ul>
      {error ? (
        <p className="form-error" role="alert">
          {describeError(error)}
        </p>
      ) : null}
      <AddToTeamForm
        username={person.username}
        teams={teams.filter(
          (team) =>
            !memberOf.has(team.id) && person.organizations.some((org) => org.organization === team.organization),
        )}
      />
    </Dialog>
  );
}

function AddToTeamForm({ username, teams }: { username: string; teams: Team[] }) {
  const add = useAddMember();
  const refetch = useRefetchPeople();
  const [team, setTeam] = useState<number | "">("");
  const [role, setRole] = useState<TeamRole>("developer");
  const errors = formErrorsOf(add.error, ["team", "role", "username"]);
  if (teams.length === 0) return null;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (team === "") return;
    add.mutate(
      { team, username, role },
      {
        onSuccess: () => {
          setTeam("");
          return refetch();
        },
      },
    );
  }

  return (
    <form className="inline-form" onSubmit={submit} aria-label="Add to a team">
      <Field label="Add to team" error={errors.fields.team}>
        {(control) => (
          <select
            {...control}
            className="input"
            value={team}
            onChange={(event) => setTeam(event.target.value ? Number(event.target.value) : "")}
          >
            <option value="">Choose a team</option>
            {teams.map((option) => (
              <option key={option.id} value={option.id}>
                {option.name}
              </option>
            ))}
          </select>
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
            {ROLES.map((option) => (
              <option key={option} value={option}>
                {ROLE_LABELS[option]}
              </option>
            ))}
          </select>
        )}
      </Field>
      <button type="submit" className="button button--primary" disabled={add.isPending || team === ""}>
        Add
      </button>
      <FormError message={errors.form ?? errors.fields.username ?? null} />
    </form>
  );
}
