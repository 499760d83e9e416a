import { useState, type FormEvent } from "react";

import { useCreatePerson } from "../../api/hooks/people";
import type { CreatedPerson, Organization, Team, TeamRole } from "../../api/types";
import { ROLE_LABELS, ROLES } from "../../auth/permissions";
import { Field, FormActions, FormError } from "../../components/Field";
import { formErrorsOf } from "../../lib/formErrors";

interface InvitePersonFormProps {
  /** Organizations the admin administers. */
  organizations: Organization[];
  teams: Team[];
  onCancel: () => void;
  onCreated: (created: CreatedPerson) => void;
}

/** Django's username rule, checked here so the admin sees it before sending. */
const USERNAME = /^[\w.@+-]{1,150}$/;

/**
 * A new person: invited with a one-time link (they choose their password) or
 * created with a password the admin passes on. A first team role is optional.
 */
export function InvitePersonForm({ organizations, teams, onCancel, onCreated }: InvitePersonFormProps) {
  const create = useCreatePerson();
  const [organization, setOrganization] = useState<number | "">(organizations[0]?.id ?? "");
  const [username, setUsername] = useState("");
  const [email, setEmail] = useState("");
  const [isOrgAdmin, setIsOrgAdmin] = useState(false);
  const [team, setTeam] = useState<number | "">("");
  const [role, setRole] = useState<TeamRole>("developer");
  const [mode, setMode] = useState<"invite" | "password">("invite");
  const [password, setPassword] = useState("");
  const [usernameError, setUsernameError] = useState<string | undefined>();
  const server = formErrorsOf(create.error, ["organization", "username", "email", "teams", "password"]);
  const passwordError =
    server.fields.password ??
    (create.error && "code" in create.error && create.error.code === "weak_password" ? server.form : null);
  const orgTeams = teams.filter((candidate) => candidate.organization === organization);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!USERNAME.test(username.trim())) {
      setUsernameError("Letters, digits and @ . + - _ only, up to 150.");
      return;
    }
    setUsernameError(undefined);
    if (organization === "") return;
    create.mutate(
      {
        organization,
        username: username.trim(),
        email: email.trim(),
        is_org_admin: isOrgAdmin,
        teams: team === "" ? [] : [{ team, role }],
        password: mode === "password" ? password : "",
      },
      { onSuccess: onCreated },
    );
  }

  return (
    <form onSubmit={submit} noValidate aria-label="Invite person">
      {organizations.length > 1 ? (
        <Field label="Organization" error={server.fields.organization}>
          {(control) => (
            <select
              {...control}
              className="input"
              value={organization}
              onChange={(event) => {
                setOrganization(Number(event.target.value));
                setTeam("");
              }}
            >
              {organizations.map((option) => (
                <option key={option.id} value={option.id}>
                  {option.name}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      <Field label="Username" error={usernameError ?? server.fields.username}>
        {(control) => (
          <input
            {...control}
            className="input"
            required
            maxLength={150}
            autoComplete="off"
            value={username}
            onChange={(event) => setUsername(event.target.value)}
          />
        )}
      </Field>
      <Field
        label="E-mail"
        hint="Optional. The invitation is e-mailed when the server can send mail."
        error={server.fields.email}
      >
        {(control) => (
          <input
            {...control}
            className="input"
            type="email"
            autoComplete="off"
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
        )}
      </Field>
      <div className="inline-form">
        <Field label="Team" error={server.fields.teams}>
          {(control) => (
            <select
              {...control}
              className="input"
              value={team}
              onChange={(event) => setTeam(event.target.value ? Number(event.target.value) : "")}
            >
              <option value="">No team yet</option>
              {orgTeams.map((option) => (
                <option key={option.id} value={option.id}>
                  {option.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Role">
          {(control) => (
            <select
              {...control}
              className="input"
              value={role}
              disabled={team === ""}
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
      </div>
      <label className="radio">
        <input type="checkbox" checked={isOrgAdmin} onChange={(event) => setIsOrgAdmin(event.target.checked)} />{" "}
        Organization admin (manages every team, people and clusters)
      </label>
      <fieldset className="fieldset">
        <legend className="field__label">How they get in</legend>
        <label className="radio">
          <input type="radio" name="mode" checked={mode === "invite"} onChange={() => setMode("invite")} /> Send a
          one-time invitation link: they choose their password
        </label>
        <label className="radio">
          <input type="radio" name="mode" checked={mode === "password"} onChange={() => setMode("password")} /> Set a
          password now and tell them
        </label>
      </fieldset>
      {mode === "password" ? (
        <Field
          label="Password"
          hint="At least 8 characters, not all digits, not too common."
          error={passwordError ?? undefined}
        >
          {(control) => (
            <input
              {...control}
              className="input"
              type="password"
              autoComplete="new-password"
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          )}
        </Field>
      ) : null}
      <FormError message={passwordError ? null : server.form} />
      <FormActions
        submitLabel={mode === "invite" ? "Create invitation" : "Create person"}
        pending={create.isPending}
        onCancel={onCancel}
      />
    </form>
  );
}
