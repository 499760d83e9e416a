import { createColumnHelper } from "@tanstack/react-table";
import { useState, type FormEvent } from "react";
import { useSearchParams } from "react-router";

import { useAccess } from "../api/hooks/access";
import { useAuditEvents, type AuditEventQuery } from "../api/hooks/auditEvents";
import { useTeams } from "../api/hooks/teams";
import type { AuditEvent } from "../api/types";
import { can } from "../auth/permissions";
import { DataTable } from "../components/DataTable";
import { Dialog } from "../components/Dialog";
import { Field } from "../components/Field";
import { JsonDiffView } from "../components/JsonDiffView";
import { PageHeader } from "../components/PageHeader";
import { Pager } from "../components/Pager";
import { Timestamp } from "../components/Timestamp";
import { EmptyState, QueryView } from "../components/states";
import { fromDateTimeLocal, toDateTimeLocal } from "../lib/time";

export const AUDIT_PAGE_SIZE = 50;

/** Resource types the control plane audits, offered as suggestions; any text is accepted. */
const KNOWN_RESOURCE_TYPES = [
  "api_key",
  "membership",
  "org_membership",
  "organization",
  "policy",
  "prefix",
  "service_account",
  "team",
];

const TEXT_FILTERS = ["actor", "action", "resource_type"] as const;
const TIME_FILTERS = ["since", "until"] as const;

/** The filters and page live in the URL, so a filtered view can be shared and survives a reload. */
function queryFromParams(params: URLSearchParams): AuditEventQuery {
  const query: AuditEventQuery = { limit: AUDIT_PAGE_SIZE };
  for (const name of [...TEXT_FILTERS, ...TIME_FILTERS]) {
    const value = params.get(name);
    if (value) query[name] = value;
  }
  const team = Number(params.get("team"));
  if (Number.isInteger(team) && team > 0) query.team = team;
  const offset = Number(params.get("offset"));
  if (Number.isInteger(offset) && offset > 0) query.offset = offset;
  return query;
}

const column = createColumnHelper<AuditEvent>();

export function AuditLogPage() {
  const access = useAccess();
  return (
    // Waits for the person's rights so nobody without them sends a request bound to be refused.
    <QueryView query={access} errorTitle="Could not check your access">
      {(data) =>
        can.readAuditLog(data) ? (
          <AuditLog />
        ) : (
          <>
            <PageHeader title="Audit log" />
            <EmptyState
              title="The audit log is for admins"
              description="Organization admins read their organization's log; team admins their team's."
            />
          </>
        )
      }
    </QueryView>
  );
}

function AuditLog() {
  const [searchParams, setSearchParams] = useSearchParams();
  const query = queryFromParams(searchParams);
  const events = useAuditEvents(query);
  const [selected, setSelected] = useState<AuditEvent | null>(null);

  function setOffset(offset: number) {
    setSearchParams((current) => {
      const params = new URLSearchParams(current);
      if (offset > 0) params.set("offset", String(offset));
      else params.delete("offset");
      return params;
    });
  }

  const columns = [
    column.accessor("timestamp", { header: "Time", cell: (info) => <Timestamp value={info.getValue()} /> }),
    column.accessor("actor_name", { header: "Actor" }),
    column.accessor("action", { header: "Action", cell: (info) => <span className="mono">{info.getValue()}</span> }),
    column.accessor((event) => `${event.resource_type} ${event.resource_name ?? ""}`.trim(), {
      id: "resource",
      header: "Resource",
    }),
    column.accessor((event) => event.team_name || "—", { id: "team", header: "Team" }),
    column.accessor("result", {
      header: "Result",
      cell: (info) => (
        <span
          className={
            info.getValue() === "failure"
              ? "badge badge--danger"
              : info.getValue() === "unknown"
                ? "badge badge--warning"
                : "badge"
          }
        >
          {info.getValue()}
        </span>
      ),
    }),
    column.display({
      id: "details",
      header: () => <span className="visually-hidden">Details</span>,
      cell: (info) => (
        <button
          type="button"
          className="button"
          aria-label={`Details of ${info.row.original.action} at ${info.row.original.timestamp}`}
          onClick={() => setSelected(info.row.original)}
        >
          Details
        </button>
      ),
    }),
  ];

  return (
    <>
      <PageHeader title="Audit log" description="Every change made through the console, the API and the system." />
      <AuditFilters
        // Remounting on a URL change keeps the form in step with back/forward navigation.
        key={searchParams.toString()}
        query={query}
        onApply={(params) => setSearchParams(params)}
      />
      <QueryView
        query={events}
        errorTitle="Could not load the audit log"
        isEmpty={(page) => page.count === 0}
        empty={<EmptyState title="No events match" description="Change or clear the filters." />}
      >
        {(page) => (
          <>
            <DataTable
              label="Audit events"
              columns={columns}
              rows={page.results}
              getRowId={(event) => String(event.id)}
              filterable={false}
              pagination={false}
            />
            <Pager
              label="Audit events"
              offset={query.offset ?? 0}
              limit={AUDIT_PAGE_SIZE}
              count={page.count}
              onOffsetChange={setOffset}
            />
          </>
        )}
      </QueryView>
      <Dialog
        open={selected !== null}
        variant="drawer"
        title={selected ? `${selected.action} · ${selected.resource_name || selected.resource_type}` : ""}
        onClose={() => setSelected(null)}
      >
        {selected ? <AuditEventDetails event={selected} /> : null}
      </Dialog>
    </>
  );
}

function AuditFilters({ query, onApply }: { query: AuditEventQuery; onApply: (params: URLSearchParams) => void }) {
  const teams = useTeams();
  const [draft, setDraft] = useState({
    actor: query.actor ?? "",
    action: query.action ?? "",
    resource_type: query.resource_type ?? "",
    team: query.team ? String(query.team) : "",
    since: query.since ? toDateTimeLocal(query.since) : "",
    until: query.until ? toDateTimeLocal(query.until) : "",
  });
  const set = (name: keyof typeof draft) => (event: { target: { value: string } }) =>
    setDraft((current) => ({ ...current, [name]: event.target.value }));

  function submit(event: FormEvent) {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const name of TEXT_FILTERS) if (draft[name].trim()) params.set(name, draft[name].trim());
    if (draft.team) params.set("team", draft.team);
    for (const name of TIME_FILTERS) {
      const instant = fromDateTimeLocal(draft[name]);
      if (instant) params.set(name, instant);
    }
    onApply(params);
  }

  return (
    <form className="filters" onSubmit={submit} aria-label="Filter the audit log">
      <Field label="Actor" hint="A username or service-account:<name>">
        {(control) => <input {...control} className="input" value={draft.actor} onChange={set("actor")} />}
      </Field>
      <Field label="Action" hint="e.g. api_key.create">
        {(control) => <input {...control} className="input mono" value={draft.action} onChange={set("action")} />}
      </Field>
      <Field label="Resource type">
        {(control) => (
          <>
            <input
              {...control}
              className="input mono"
              list="audit-resource-types"
              value={draft.resource_type}
              onChange={set("resource_type")}
            />
            <datalist id="audit-resource-types">
              {KNOWN_RESOURCE_TYPES.map((type) => (
                <option key={type} value={type} />
              ))}
            </datalist>
          </>
        )}
      </Field>
      <Field label="Team">
        {(control) => (
          <select {...control} className="input" value={draft.team} onChange={set("team")}>
            <option value="">All teams</option>
            {(teams.data ?? []).map((team) => (
              <option key={team.id} value={team.id}>
                {team.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="From">
        {(control) => (
          <input {...control} className="input" type="datetime-local" value={draft.since} onChange={set("since")} />
        )}
      </Field>
      <Field label="Until">
        {(control) => (
          <input {...control} className="input" type="datetime-local" value={draft.until} onChange={set("until")} />
        )}
      </Field>
      <div className="actions">
        <button type="submit" className="button button--primary">
          Apply filters
        </button>
        <button type="button" className="button" onClick={() => onApply(new URLSearchParams())}>
          Clear
        </button>
      </div>
    </form>
  );
}

function AuditEventDetails({ event }: { event: AuditEvent }) {
  return (
    <>
      <dl className="details">
        <dt>Time</dt>
        <dd>
          <Timestamp value={event.timestamp} />
        </dd>
        <dt>Actor</dt>
        <dd>
          {event.actor_name} ({event.actor_type}, via {event.via}
          {event.api_key_id ? ` key ${event.api_key_id}` : ""})
        </dd>
        <dt>Resource</dt>
        <dd>
          {event.resource_type} {event.resource_name}{" "}
          {event.resource_id ? <span className="muted">#{event.resource_id}</span> : null}
        </dd>
        <dt>Team</dt>
        <dd>{event.team_name || "—"}</dd>
        <dt>Result</dt>
        <dd>
          {event.result}
          {event.reason ? `: ${event.reason}` : ""}
        </dd>
        <dt>Client address</dt>
        <dd className="mono">{event.client_address || "—"}</dd>
      </dl>
      <h3 className="section__title">Changes</h3>
      <JsonDiffView before={event.before} after={event.after} />
    </>
  );
}
