import { createColumnHelper } from "@tanstack/react-table";
import { useDeferredValue, useEffect, useId, useMemo, useState } from "react";
import { Link } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { useAccess } from "../api/hooks/access";
import { useClusters } from "../api/hooks/clusters";
import { useTeams } from "../api/hooks/teams";
import { useTopics } from "../api/hooks/topics";
import { byClusterAndName, managedKey, useManagedResources } from "../api/hooks/managedResources";
import type { ManagedResource, Topic } from "../api/types";
import { can, roleInTeam } from "../auth/permissions";
import { DataTable } from "../components/DataTable";
import { Dialog } from "../components/Dialog";
import { SelectField, type Choice } from "../components/FormFields";
import { PageHeader } from "../components/PageHeader";
import { EmptyState, QueryView } from "../components/states";
import { formatBytes } from "../lib/bytes";
import { useUrlFilters } from "../lib/useUrlFilters";
import { useRunningTopicChanges } from "../api/hooks/clusters";
import { OperationProgress } from "./clusters/OperationProgress";
import { CreateTopicForm } from "./topics/CreateTopicForm";
import { ManagedAsCodeBadge } from "./topics/ManagedAsCode";
import { TOPIC_STATUS_BADGES, TOPIC_STATUS_LABELS, topicStatus, type TopicStatus } from "./topics/topicStatus";

export interface TopicRow {
  topic: Topic;
  clusterName: string;
  teamName: string;
  status: TopicStatus;
  /** The file set that manages the topic as code, if one does. */
  managedAsCode: ManagedResource | undefined;
  /** Lower-cased name, cluster and team: what the search box matches, computed once per list. */
  haystack: string;
}

const column = createColumnHelper<TopicRow>();
const columns = [
  column.accessor((row) => row.topic.name, {
    id: "name",
    header: "Name",
    cell: (info) => (
      <Link to={`/topics/${info.row.original.topic.id}`} className="mono">
        {info.getValue()}
      </Link>
    ),
  }),
  column.accessor("clusterName", { header: "Cluster" }),
  column.accessor("teamName", { header: "Team" }),
  column.accessor((row) => row.topic.observed_partitions ?? row.topic.partitions, {
    id: "partitions",
    header: "Partitions",
  }),
  column.accessor((row) => row.topic.observed_replication_factor ?? row.topic.replication_factor ?? 1, {
    id: "replication",
    header: "RF",
  }),
  column.accessor((row) => row.topic.size_bytes ?? 0, {
    id: "size",
    header: "Size",
    cell: (info) => formatBytes(info.getValue()),
  }),
  column.accessor("status", {
    header: "Status",
    cell: (info) => (
      <span className={TOPIC_STATUS_BADGES[info.getValue()]}>{TOPIC_STATUS_LABELS[info.getValue()]}</span>
    ),
  }),
  column.accessor((row) => row.managedAsCode?.file_set ?? "", {
    id: "code",
    header: "As code",
    cell: (info) => <ManagedAsCodeBadge resource={info.row.original.managedAsCode} />,
  }),
];

/** How long the URL waits for typing to pause before it records the search. */
const URL_DEBOUNCE_MS = 300;

/** The rows whose name, cluster or team contains every word of the search, in list order. */
export function filterTopicRows(rows: readonly TopicRow[], search: string): TopicRow[] {
  const words = search.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return rows as TopicRow[];
  return rows.filter((row) => words.every((word) => row.haystack.includes(word)));
}

export function TopicsPage() {
  const [filters, setFilters] = useUrlFilters(["q", "cluster", "team"] as const);
  const topics = useTopics();
  // Not part of the page's query: the list shows without its "as code" badges rather than not at all.
  const managedTopics = useManagedResources("Topic");
  const managed = useMemo(() => byClusterAndName(managedTopics.data), [managedTopics.data]);
  const clusters = useClusters();
  const teams = useTeams();
  const access = useAccess();
  const [creating, setCreating] = useState(false);

  const creatableTeams = useMemo(
    () => (access.data ? (teams.data ?? []).filter((team) => can.manageTopics(roleInTeam(access.data, team))) : []),
    [access.data, teams.data],
  );

  return (
    <>
      <PageHeader
        title="Topics"
        description="Every topic of your teams on every cluster, with what the cluster last reported."
        actions={
          creatableTeams.length > 0 ? (
            <button type="button" className="button button--primary" onClick={() => setCreating(true)}>
              Create topic
            </button>
          ) : null
        }
      />
      <TopicChangesInProgress />
      <QueryView
        query={combineQueries(topics, clusters, teams)}
        errorTitle="Could not load the topics"
        loadingLabel="Loading topics…"
        isEmpty={([topicList]) => topicList.length === 0}
        empty={<EmptyState title="No topics yet" description="Create one, or ask an admin to adopt existing ones." />}
      >
        {([topicList, clusterList, teamList]) => (
          <TopicList
            topics={topicList}
            clusterNames={new Map(clusterList.map((each) => [each.id, each.name]))}
            teamNames={new Map(teamList.map((each) => [each.id, each.name]))}
            managed={managed}
            filters={filters}
            setFilters={setFilters}
          />
        )}
      </QueryView>
      <Dialog open={creating} title="Create topic" onClose={() => setCreating(false)}>
        <CreateTopicForm
          teams={creatableTeams}
          clusters={clusters.data ?? []}
          initialCluster={Number(filters.cluster) || undefined}
          initialTeam={Number(filters.team) || undefined}
          memberOf={new Set(access.data?.teamRoles.keys())}
          onCancel={() => setCreating(false)}
        />
      </Dialog>
    </>
  );
}

/** Topic changes the cluster has not confirmed yet; each shows how far the control plane has got. */
function TopicChangesInProgress() {
  const running = useRunningTopicChanges();
  const operations = running.data ?? [];
  if (operations.length === 0) return null;
  return (
    <section aria-label="Changes being confirmed" className="operations">
      <h2>Changes being confirmed</h2>
      {operations.map((operation) => (
        <OperationProgress key={operation.id} operation={operation} />
      ))}
    </section>
  );
}

interface TopicListProps {
  topics: Topic[];
  clusterNames: Map<number, string>;
  teamNames: Map<number, string>;
  managed: Map<string, ManagedResource>;
  filters: Record<"q" | "cluster" | "team", string>;
  setFilters: (changes: Partial<Record<"q" | "cluster" | "team", string>>) => void;
}

function TopicList({ topics, clusterNames, teamNames, managed, filters, setFilters }: TopicListProps) {
  const searchId = useId();
  // The box answers every keystroke; the table follows as a deferred render, so typing never waits on it.
  const [search, setSearch] = useState(filters.q);
  const deferredSearch = useDeferredValue(search);

  useEffect(() => {
    if (search === filters.q) return;
    const timer = window.setTimeout(() => setFilters({ q: search }), URL_DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [search, filters.q, setFilters]);

  const allRows = useMemo(
    () =>
      topics.map((topic): TopicRow => {
        const clusterName = clusterNames.get(topic.cluster) ?? String(topic.cluster);
        const teamName = topic.team != null ? (teamNames.get(topic.team) ?? "—") : "Unmanaged";
        return {
          topic,
          clusterName,
          teamName,
          status: topicStatus(topic),
          managedAsCode: managed.get(managedKey(topic.cluster, topic.name)),
          haystack: `${topic.name} ${clusterName} ${teamName}`.toLowerCase(),
        };
      }),
    [topics, clusterNames, teamNames, managed],
  );
  const scopedRows = useMemo(
    () =>
      allRows.filter(
        (row) =>
          (!filters.cluster || String(row.topic.cluster) === filters.cluster) &&
          (!filters.team || String(row.topic.team ?? "") === filters.team),
      ),
    [allRows, filters.cluster, filters.team],
  );
  const rows = useMemo(() => filterTopicRows(scopedRows, deferredSearch), [scopedRows, deferredSearch]);
  // The same element while the rows stay the same, so a keystroke re-renders the box and not the table.
  const table = useMemo(
    () =>
      rows.length === 0 ? (
        <EmptyState title="No topics match" description="Try another search or clear the filters." />
      ) : (
        <DataTable
          label="Topics"
          columns={columns}
          rows={rows}
          getRowId={(row) => String(row.topic.id)}
          filterable={false}
          pagination={false}
          initialSorting={[{ id: "name", desc: false }]}
        />
      ),
    [rows],
  );

  // Values as text: they go to and come from the URL.
  const byName = (names: Map<number, string>): Choice<string>[] =>
    [...names].map(([id, name]) => [String(id), name] as const).sort((a, b) => a[1].localeCompare(b[1]));

  return (
    <>
      <div className="inline-form filters">
        <div className="field">
          <label htmlFor={searchId} className="field__label">
            Search topics
          </label>
          <input
            id={searchId}
            type="search"
            className="input"
            placeholder="Name, cluster or team"
            value={search}
            onChange={(event) => setSearch(event.target.value)}
          />
        </div>
        <SelectField
          label="Cluster"
          value={filters.cluster}
          choices={byName(clusterNames)}
          emptyLabel="All clusters"
          onChange={(cluster) => setFilters({ cluster })}
        />
        <SelectField
          label="Team"
          value={filters.team}
          choices={byName(teamNames)}
          emptyLabel="All teams"
          onChange={(team) => setFilters({ team })}
        />
      </div>
      <p className="muted" role="status" data-testid="topic-count">
        {rows.length === allRows.length ? `${allRows.length} topics` : `${rows.length} of ${allRows.length} topics`}
      </p>
      {table}
    </>
  );
}
