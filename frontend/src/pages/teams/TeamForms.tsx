import { useState, type FormEvent } from "react";
import { useNavigate } from "react-router";

import { useAddPrefix } from "../../api/hooks/prefixes";
import { useCreateTeam, useUpdateTeam } from "../../api/hooks/teams";
import type { Organization, Team } from "../../api/types";
import { Field, FormActions, FormError } from "../../components/Field";
import { formErrorsOf } from "../../lib/formErrors";

/** What the create form hands the team's page when the team was made but its prefix was not. */
export interface TeamPageState {
  prefixError?: string;
}

interface CreateTeamFormProps {
  /** Organizations the person administers: only org admins create teams. */
  organizations: Organization[];
  onCancel: () => void;
}

/**
 * A new team and, optionally, the name prefix its topics and consumer groups
 * go under: without a prefix the team cannot create a topic, so a first admin
 * sets both here and lands on the team's page.
 */
export function CreateTeamForm({ organizations, onCancel }: CreateTeamFormProps) {
  const navigate = useNavigate();
  const createTeam = useCreateTeam();
  const addPrefix = useAddPrefix();
  const [organization, setOrganization] = useState<number | "">(organizations[0]?.id ?? "");
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [prefix, setPrefix] = useState("");
  const server = formErrorsOf(createTeam.error, ["organization", "name", "slug", "description"]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (organization === "") return;
    let team: Team;
    try {
      team = await createTeam.mutateAsync({ organization, name: name.trim(), slug: "", description });
    } catch {
      return; // shown from createTeam.error
    }
    const wanted = prefix.trim();
    for (const resourceType of wanted ? (["topic", "group"] as const) : []) {
      try {
        await addPrefix.mutateAsync({ team: team.id, resource_type: resourceType, prefix: wanted });
      } catch (error) {
        // The team exists: its page says why the prefix was refused and lets the admin try another.
        const message = formErrorsOf(error, ["prefix"]);
        const refusal: TeamPageState = { prefixError: message.fields.prefix ?? message.form ?? "It was refused." };
        navigate(`/teams/${team.id}`, { state: refusal });
        return;
      }
    }
    navigate(`/teams/${team.id}`);
  }

  return (
    <form onSubmit={(event) => void submit(event)} noValidate aria-label="Create team">
      {organizations.length > 1 ? (
        <Field label="Organization" error={server.fields.organization}>
          {(control) => (
            <select
              {...control}
              className="input"
              value={organization}
              onChange={(event) => setOrganization(Number(event.target.value))}
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
      <Field label="Name" error={server.fields.name ?? server.fields.slug}>
        {(control) => (
          <input
            {...control}
            className="input"
            required
            maxLength={100}
            autoComplete="off"
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
        )}
      </Field>
      <Field label="Description" error={server.fields.description}>
        {(control) => (
          <textarea
            {...control}
            className="input"
            rows={2}
            maxLength={1000}
            value={description}
            onChange={(event) => setDescription(event.target.value)}
          />
        )}
      </Field>
      <Field
        label="Name prefix"
        hint="Optional. The team's topics and consumer groups must start with it, e.g. payments. — no two teams' prefixes overlap."
      >
        {(control) => (
          <input
            {...control}
            className="input mono"
            maxLength={249}
            autoComplete="off"
            placeholder="payments."
            value={prefix}
            onChange={(event) => setPrefix(event.target.value)}
          />
        )}
      </Field>
      <FormError message={server.form} />
      <FormActions
        submitLabel="Create team"
        pending={createTeam.isPending || addPrefix.isPending}
        onCancel={onCancel}
      />
    </form>
  );
}

/** Rename a team or change its description (team admins and org admins). */
export function EditTeamForm({ team, onDone }: { team: Team; onDone: () => void }) {
  const update = useUpdateTeam(team.id);
  const [name, setName] = useState(team.name);
  const [description, setDescription] = useState(team.description ?? "");
  const server = formErrorsOf(update.error, ["name", "description"]);

  function submit(event: FormEvent) {
    event.preventDefault();
    update.mutate({ name: name.trim(), description }, { onSuccess: onDone });
  }

  return (
    <form onSubmit={submit} noValidate aria-label="Edit team">
      <Field label="Name" error={server.fields.name}>
        {(control) => (
          <input
            {...control}
            className="input"
            required
            maxLength={100}
            autoComplete="off"
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
        )}
      </Field>
      <Field label="Description" error={server.fields.description}>
        {(control) => (
          <textarea
            {...control}
            className="input"
            rows={3}
            maxLength={1000}
            value={description}
            onChange={(event) => setDescription(event.target.value)}
          />
        )}
      </Field>
      <FormError message={server.form} />
      <FormActions submitLabel="Save" pending={update.isPending} onCancel={onDone} />
    </form>
  );
}
