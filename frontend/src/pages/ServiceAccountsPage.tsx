import { createColumnHelper } from "@tanstack/react-table";
import { useId, useState, type FormEvent } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { useAccess } from "../api/hooks/access";
import { useCreateServiceAccount, useServiceAccounts } from "../api/hooks/serviceAccounts";
import { useTeams } from "../api/hooks/teams";
import type { ServiceAccount, Team } from "../api/types";
import { can, roleInTeam } from "../auth/permissions";
import { DataTable } from "../components/DataTable";
import { Dialog } from "../components/Dialog";
import { Field, FormActions, FormError } from "../components/Field";
import { PageHeader } from "../components/PageHeader";
import { Timestamp } from "../components/Timestamp";
import { EmptyState, QueryView } from "../components/states";
import { formErrorsOf } from "../lib/formErrors";

/** The control plane's rule: the name is the Kafka principal and the SCRAM user name. */
const SERVICE_ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const NAME_RULE = "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit.";

interface AccountRow {
  account: ServiceAccount;
  teamName: string;
}

const column = createColumnHelper<AccountRow>();
const columns = [
  column.accessor((row) => row.account.name, {
    id: "name",
    header: "Name",
    cell: (info) => <Link to={`/service-accounts/${info.row.original.account.id}`}>{info.getValue()}</Link>,
  }),
  column.accessor("teamName", { header: "Team" }),
  column.accessor((row) => row.account.principal, {
    id: "principal",
    header: "Principal",
    cell: (info) => <span className="mono">{info.getValue()}</span>,
  }),
  column.accessor((row) => row.account.created_at, {
    id: "created",
    header: "Created",
    cell: (info) => <Timestamp value={info.getValue()} />,
  }),
];

/** `?team=<id>` in the URL, so a filtered list can be linked to. */
function useTeamFilter(): [number | undefined, (team: number | undefined) => void] {
  const [searchParams, setSearchParams] = useSearchParams();
  const raw = Number(searchParams.get("team"));
  const team = Number.isInteger(raw) && raw > 0 ? raw : undefined;
  const setTeam = (next: number | undefined) =>
    setSearchParams(
      (current) => {
        const params = new URLSearchParams(current);
        if (next === undefined) params.delete("team");
        else params.set("team", String(next));
        return params;
      },
      { replace: true },
    );
  return [team, setTeam];
}

export function ServiceAccountsPage() {
  const filterId = useId();
  const [team, setTeam] = useTeamFilter();
  const teams = useTeams();
  const access = useAccess();
  const accounts = useServiceAccounts(team);
  const [creating, setCreating] = useState(false);

  const teamList = teams.data ?? [];
  const manageable = access.data
    ? teamList.filter((candidate) => can.manageServiceAccounts(roleInTeam(access.data, candidate)))
    : [];

  return (
    <>
      <PageHeader
        title="Service accounts"
        description="Identities for applications: each one is a Kafka principal owned by a team."
        actions={
          manageable.length > 0 ? (
            <button type="button" className="button button--primary" onClick={() => setCreating(true)}>
              New service account
            </button>
          ) : null
        }
      />
      <div className="inline-form">
        <div className="field">
          <label htmlFor={filterId} className="field__label">
            Team
          </label>
          <select
            id={filterId}
            className="input"
            value={team ?? ""}
            onChange={(event) => setTeam(event.target.value ? Number(event.target.value) : undefined)}
          >
            <option value="">All teams</option>
            {teamList.map((option) => (
              <option key={option.id} value={option.id}>
                {option.name}
              </option>
            ))}
          </select>
        </div>
      </div>
      <QueryView
        query={combineQueries(accounts, teams)}
        errorTitle="Could not load the service accounts"
        isEmpty={([accountList]) => accountList.length === 0}
        empty={
          <EmptyState
            title="No service accounts yet"
            description={team ? "This team has no service accounts." : "Create one to give an application access."}
          />
        }
      >
        {([accountList, allTeams]) => {
          const names = new Map(allTeams.map((each) => [each.id, each.name]));
          const rows = accountList.map((account) => ({ account, teamName: names.get(account.team) ?? "—" }));
          return (
            <DataTable
              label="Service accounts"
              columns={columns}
              rows={rows}
              getRowId={(row) => String(row.account.id)}
            />
          );
        }}
      </QueryView>
      <Dialog open={creating} title="New service account" onClose={() => setCreating(false)}>
        <CreateServiceAccountForm teams={manageable} initialTeam={team} onCancel={() => setCreating(false)} />
      </Dialog>
    </>
  );
}

interface CreateFormProps {
  teams: Team[];
  initialTeam?: number;
  onCancel: () => void;
}

function CreateServiceAccountForm({ teams, initialTeam, onCancel }: CreateFormProps) {
  const navigate = useNavigate();
  const create = useCreateServiceAccount();
  const [team, setTeam] = useState<number | "">(
    teams.some((each) => each.id === initialTeam) ? (initialTeam ?? "") : (teams[0]?.id ?? ""),
  );
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [nameError, setNameError] = useState<string | undefined>();
  const server = formErrorsOf(create.error, ["team", "name", "description"]);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!SERVICE_ACCOUNT_NAME.test(name)) {
      setNameError(NAME_RULE);
      return;
    }
    setNameError(undefined);
    if (team === "") return;
    create.mutate({ team, name, description }, { onSuccess: (account) => navigate(`/service-accounts/${account.id}`) });
  }

  return (
    <form onSubmit={submit} noValidate>
      <Field label="Team" error={server.fields.team}>
        {(control) => (
          <select {...control} className="input" value={team} onChange={(event) => setTeam(Number(event.target.value))}>
            {teams.map((option) => (
              <option key={option.id} value={option.id}>
                {option.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="Name"
        hint={`Its Kafka principal is User:<name>. ${NAME_RULE}`}
        error={nameError ?? server.fields.name}
      >
        {(control) => (
          <input
            {...control}
            className="input mono"
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
      <FormError message={server.form} />
      <FormActions submitLabel="Create" pending={create.isPending} onCancel={onCancel} />
    </form>
  );
}
