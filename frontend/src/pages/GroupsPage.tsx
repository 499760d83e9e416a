import { createColumnHelper } from "@tanstack/react-table";
import { useState, type FormEvent } from "react";
import { Link, useSearchParams } from "react-router";

import { useClusters } from "../api/hooks/clusters";
import {
  GROUP_TYPES,
  GROUPS_PAGE_SIZE,
  useConsumerGroups,
  type ConsumerGroup,
  type ConsumerGroupQuery,
} from "../api/hooks/groups";
import { useLagFleet } from "../api/hooks/lag";
import { useTeams } from "../api/hooks/teams";
import { DataTable } from "../components/DataTable";
import { SelectField, TextField, type Choice } from "../components/FormFields";
import { PageHeader } from "../components/PageHeader";
import { Pager } from "../components/Pager";
import { Timestamp } from "../components/Timestamp";
import { EmptyState, QueryView } from "../components/states";
import { formatSeconds } from "../components/charts";
import { GROUP_STATES, GroupStateBadge, stateLabel } from "./groups/GroupStateBadge";
import { LagStatusBadge } from "./groups/LagStatusBadge";

const NUMBER = new Intl.NumberFormat();
const DEFAULT_ORDERING = "-total_lag";
const ORDERINGS: Record<string, string> = {
  "-total_lag": "Most lag first",
  total_lag: "Least lag first",
  name: "Name",
  state: "State",
};

/** Filters, ordering and page live in the URL so a filtered view can be shared and survives a reload. */
function queryFromParams(params: URLSearchParams): ConsumerGroupQuery {
  const query: ConsumerGroupQuery = { limit: GROUPS_PAGE_SIZE, ordering: DEFAULT_ORDERING };
  for (const name of ["cluster", "team", "offset"] as const) {
    const value = Number(params.get(name));
    if (Number.isInteger(value) && value > 0) query[name] = value;
  }
  const state = params.get("state");
  if (state) query.state = state;
  const name = params.get("name");
  if (name) query.name = name;
  const groupType = GROUP_TYPES.find(([value]) => value === params.get("group_type"));
  if (groupType) query.group_type = groupType[0];
  const ordering = params.get("ordering");
  if (ordering && ordering in ORDERINGS) query.ordering = ordering;
  return query;
}

const column = createColumnHelper<ConsumerGroup>();
const TYPE_LABEL = new Map<string, string>(GROUP_TYPES);

export function GroupsPage() {
  const [searchParams, setSearchParams] = useSearchParams();
  const query = queryFromParams(searchParams);
  const groups = useConsumerGroups(query);
  const clusters = useClusters();
  const teams = useTeams();
  const clusterName = new Map((clusters.data ?? []).map((cluster) => [cluster.id, cluster.name]));
  const teamName = new Map((teams.data ?? []).map((team) => [team.id, team.name]));
  // Health comes from the lag sampler's fleet view, for the same filters (at most one page of it).
  const fleet = useLagFleet({ cluster: query.cluster, team: query.team, name: query.name, limit: 500 });
  const healthOf = new Map((fleet.data?.results ?? []).map((row) => [row.group, row]));
  const filtered = ["cluster", "team", "state", "name", "group_type"].some((name) => searchParams.has(name));

  function setOffset(offset: number) {
    setSearchParams((current) => {
      const params = new URLSearchParams(current);
      if (offset > 0) params.set("offset", String(offset));
      else params.delete("offset");
      return params;
    });
  }

  const columns = [
    column.accessor("name", {
      header: "Group",
      cell: (info) => (
        <Link to={`/groups/${info.row.original.id}`} className="mono">
          {info.getValue()}
        </Link>
      ),
    }),
    column.accessor((group) => group.group_type ?? "classic", {
      id: "type",
      header: "Type",
      cell: (info) => TYPE_LABEL.get(info.getValue()) ?? info.getValue(),
    }),
    // Names are looked up in the cell: the table caches accessor values per row, and the cluster and
    // team lists may arrive after the groups.
    column.accessor("cluster", {
      header: "Cluster",
      cell: (info) => clusterName.get(info.getValue()) ?? `#${info.getValue()}`,
    }),
    column.accessor((group) => group.team ?? null, {
      id: "team",
      header: "Team",
      cell: (info) => {
        const team = info.getValue();
        return team == null ? "—" : (teamName.get(team) ?? `#${team}`);
      },
    }),
    column.accessor((group) => group.state ?? "", {
      id: "state",
      header: "State",
      cell: (info) => <GroupStateBadge state={info.getValue()} />,
    }),
    column.accessor((group) => group.member_count ?? 0, { id: "members", header: "Members" }),
    column.accessor((group) => group.total_lag ?? 0, {
      id: "lag",
      header: "Lag / backlog (messages)",
      cell: (info) => NUMBER.format(info.getValue()),
    }),
    column.display({
      id: "health",
      header: "Health",
      cell: (info) => {
        const health = healthOf.get(info.row.original.id);
        return health ? <LagStatusBadge status={health.status} reason={health.reason} /> : "—";
      },
    }),
    column.display({
      id: "lag-seconds",
      header: "Lag (time)",
      cell: (info) => {
        const seconds = healthOf.get(info.row.original.id)?.lag_seconds;
        return seconds == null ? "—" : formatSeconds(seconds);
      },
    }),
    column.accessor((group) => group.observed_at ?? "", {
      id: "observed",
      header: "Sampled",
      cell: (info) => (info.getValue() ? <Timestamp value={info.getValue()} relative /> : "—"),
    }),
  ];

  return (
    <>
      <PageHeader
        title="Consumer groups"
        description="Consumer, share and Streams groups in your teams' prefixes with the lag (a share group's backlog) the sampler last measured."
      />
      <GroupFilters
        key={searchParams.toString()}
        query={query}
        clusters={(clusters.data ?? []).map((cluster) => ({ id: cluster.id, name: cluster.name }))}
        teams={(teams.data ?? []).map((team) => ({ id: team.id, name: team.name }))}
        onApply={(params) => setSearchParams(params)}
      />
      <QueryView
        query={groups}
        errorTitle="Could not load the consumer groups"
        isEmpty={(page) => page.count === 0}
        empty={
          filtered ? (
            <EmptyState title="No groups match" description="Change or clear the filters." />
          ) : (
            <EmptyState
              title="No consumer groups yet"
              description="Groups appear here once a consumer commits offsets on one of your clusters."
            />
          )
        }
      >
        {(page) => (
          <>
            <DataTable
              label="Consumer groups"
              columns={columns}
              rows={page.results}
              getRowId={(group) => String(group.id)}
              filterable={false}
              pagination={false}
            />
            <Pager
              label="Consumer groups"
              offset={query.offset ?? 0}
              limit={GROUPS_PAGE_SIZE}
              count={page.count}
              onOffsetChange={setOffset}
            />
          </>
        )}
      </QueryView>
    </>
  );
}

interface Named {
  id: number;
  name: string;
}

function GroupFilters({
  query,
  clusters,
  teams,
  onApply,
}: {
  query: ConsumerGroupQuery;
  clusters: Named[];
  teams: Named[];
  onApply: (params: URLSearchParams) => void;
}) {
  const [draft, setDraft] = useState({
    name: query.name ?? "",
    cluster: query.cluster ? String(query.cluster) : "",
    team: query.team ? String(query.team) : "",
    state: query.state ?? "",
    group_type: query.group_type ?? "",
    ordering: query.ordering ?? DEFAULT_ORDERING,
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    const params = new URLSearchParams();
    if (draft.name.trim()) params.set("name", draft.name.trim());
    for (const name of ["cluster", "team", "state", "group_type"] as const)
      if (draft[name]) params.set(name, draft[name]);
    if (draft.ordering !== DEFAULT_ORDERING) params.set("ordering", draft.ordering);
    onApply(params);
  }

  const select = (label: string, name: keyof typeof draft, choices: readonly Choice<string>[], empty?: string) => (
    <SelectField
      label={label}
      value={draft[name]}
      choices={choices}
      emptyLabel={empty}
      onChange={(value) => setDraft((current) => ({ ...current, [name]: value }))}
    />
  );
  const named = (options: Named[]) => options.map((option) => [String(option.id), option.name] as const);

  return (
    <form className="filters" onSubmit={submit} aria-label="Filter consumer groups">
      <TextField
        label="Name contains"
        value={draft.name}
        onChange={(name) => setDraft((current) => ({ ...current, name }))}
      />
      {select("Cluster", "cluster", named(clusters), "All clusters")}
      {select("Team", "team", named(teams), "All teams")}
      {select(
        "State",
        "state",
        GROUP_STATES.map((state) => [state, stateLabel(state)] as const),
        "Any state",
      )}
      {select("Type", "group_type", GROUP_TYPES, "Any type")}
      {select("Order", "ordering", Object.entries(ORDERINGS) as [string, string][])}
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
