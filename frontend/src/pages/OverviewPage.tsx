import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";
import { Link } from "react-router";

import { useClusters } from "../api/hooks/clusters";
import { useLagFleet, type GroupLag } from "../api/hooks/lag";
import {
  OVERVIEW_TOP,
  useClusterThroughput,
  useFiringAlerts,
  useOverview,
  type ClusterThroughput,
  type FiringAlert,
} from "../api/hooks/overview";
import type { Cluster } from "../api/types";
import { formatCompact, formatSeconds, TimeSeriesChart, type TimeSeries } from "../components/charts";
import { DataTable } from "../components/DataTable";
import { PageHeader } from "../components/PageHeader";
import { Timestamp } from "../components/Timestamp";
import { EmptyState, QueryView } from "../components/states";
import { ClusterStatusBadge, healthOf, HealthBadge } from "./clusters/ClusterStatusBadge";
import type { Metric } from "./alerts/api";
import { METRIC_LABELS } from "./alerts/labels";
import { LagStatusBadge } from "./groups/LagStatusBadge";

const NUMBER = new Intl.NumberFormat();

export function OverviewPage() {
  return (
    <>
      <PageHeader title="Overview" description="Your organization's Kafka service at a glance." />
      <ClustersSection />
      <ClusterHealthAlertsSection />
      <ThroughputSection />
      <WorstGroupsSection />
      <FiringAlertsSection />
      <WorkerSection />
    </>
  );
}

const clusterColumn = createColumnHelper<Cluster>();
const clusterColumns = [
  clusterColumn.accessor("name", {
    header: "Cluster",
    cell: (info) => <Link to={`/clusters/${info.row.original.id}`}>{info.getValue()}</Link>,
  }),
  clusterColumn.accessor("status", {
    header: "Status",
    cell: (info) => <ClusterStatusBadge status={info.getValue()} />,
  }),
  clusterColumn.display({
    id: "health",
    header: "Health",
    cell: (info) => <HealthBadge health={info.row.original.health} status={info.row.original.status} />,
  }),
  clusterColumn.accessor((cluster) => healthOf(cluster.health).brokers_up ?? null, {
    id: "brokers",
    header: "Brokers up",
    cell: (info) => {
      const health = healthOf(info.row.original.health);
      if (health.brokers_up === undefined) return "—";
      return `${health.brokers_up} of ${health.brokers_expected ?? info.row.original.broker_count}`;
    },
  }),
  clusterColumn.accessor((cluster) => healthOf(cluster.health).topic_count ?? null, {
    id: "topics",
    header: "Topics",
    cell: (info) => (info.getValue() == null ? "—" : NUMBER.format(info.getValue() as number)),
  }),
  clusterColumn.accessor((cluster) => healthOf(cluster.health).partition_count ?? null, {
    id: "partitions",
    header: "Partitions",
    cell: (info) => {
      const health = healthOf(info.row.original.health);
      if (health.partition_count === undefined) return "—";
      const offline = health.offline_partitions ?? 0;
      return `${NUMBER.format(health.partition_count)}${offline ? ` (${offline} offline)` : ""}`;
    },
  }),
];

function ClustersSection() {
  const clusters = useClusters();
  return (
    <section className="section" aria-labelledby="overview-clusters">
      <h2 id="overview-clusters" className="section__title">
        Clusters
      </h2>
      <QueryView
        query={clusters}
        errorTitle="Could not load the clusters"
        isEmpty={(rows) => rows.length === 0}
        empty={
          <EmptyState
            title="No clusters yet"
            description={
              <>
                Create one on the <Link to="/clusters">clusters page</Link>.
              </>
            }
          />
        }
      >
        {(rows) => (
          <DataTable
            label="Clusters"
            columns={clusterColumns}
            rows={rows}
            getRowId={(cluster) => String(cluster.id)}
            filterable={rows.length > 10}
            pagination={{ pageSize: 10 }}
          />
        )}
      </QueryView>
    </section>
  );
}

/** The chart draws the total and this many of the busiest topics. */
const THROUGHPUT_TOPICS = 5;

function ThroughputSection() {
  const clusters = useClusters();
  const [chosen, setChosen] = useState<number | null>(null);
  const rows = clusters.data ?? [];
  // Before the user picks one, the first listed cluster is shown.
  const selected = rows.find((row) => row.id === chosen) ?? rows[0];
  if (!selected) return null;
  return (
    <section className="section" aria-labelledby="overview-throughput">
      <h2 id="overview-throughput" className="section__title">
        Throughput (messages/s), last hour
      </h2>
      {rows.length > 1 ? (
        <label className="field">
          <span className="field__label">Cluster</span>
          <select className="input" value={selected.id} onChange={(event) => setChosen(Number(event.target.value))}>
            {rows.map((row) => (
              <option key={row.id} value={row.id}>
                {row.name}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <ThroughputChart cluster={selected.id} name={selected.name} />
    </section>
  );
}

/** The total first, then the busiest topics (the API lists topics busiest first). */
function throughputSeries(throughput: ClusterThroughput): { timestamps: number[]; series: TimeSeries[] } {
  return {
    timestamps: throughput.times.map((time) => new Date(time).getTime()),
    series: [
      { label: "total", values: throughput.messages_per_second },
      ...throughput.by_topic
        .slice(0, THROUGHPUT_TOPICS)
        .map((topic) => ({ label: topic.topic, values: topic.messages_per_second })),
    ],
  };
}

function ThroughputChart({ cluster, name }: { cluster: number; name: string }) {
  const throughput = useClusterThroughput(cluster);
  return (
    <QueryView
      query={throughput}
      loadingLabel="Loading the throughput…"
      errorTitle="Could not load the throughput"
      isEmpty={(data) => data.times.length === 0}
      empty={
        <EmptyState
          title="No samples yet — the lag sampler runs every 15 s"
          description="Throughput needs two sampling runs of this cluster."
        />
      }
    >
      {(data) => {
        const { timestamps, series } = throughputSeries(data);
        return (
          <TimeSeriesChart
            label={`Throughput of ${name} in messages per second`}
            timestamps={timestamps}
            series={series}
            formatValue={(value) => `${formatCompact(value)}/s`}
          />
        );
      }}
    </QueryView>
  );
}

const groupColumn = createColumnHelper<GroupLag>();
const groupColumns = [
  groupColumn.accessor("name", {
    header: "Group",
    cell: (info) => (
      <Link to={`/groups/${info.row.original.group}`} className="mono">
        {info.getValue()}
      </Link>
    ),
  }),
  groupColumn.accessor((row) => row.status ?? "OK", {
    id: "status",
    header: "Status",
    cell: (info) => <LagStatusBadge status={info.row.original.status} reason={info.row.original.reason} />,
  }),
  groupColumn.accessor((row) => row.reason ?? "", { id: "reason", header: "Why" }),
  groupColumn.accessor((row) => row.lag_messages ?? 0, {
    id: "messages",
    header: "Lag (messages)",
    cell: (info) => NUMBER.format(info.getValue()),
  }),
  groupColumn.accessor((row) => row.lag_seconds ?? null, {
    id: "seconds",
    header: "Lag (time)",
    cell: (info) => (info.getValue() == null ? "—" : formatSeconds(info.getValue() as number)),
  }),
  groupColumn.accessor((row) => row.produce_rate ?? null, {
    id: "produced",
    header: "Produced",
    cell: (info) => (info.getValue() == null ? "—" : `${formatCompact(info.getValue() as number)}/s`),
  }),
];

function WorstGroupsSection() {
  // The fleet API orders by health, worst first.
  const fleet = useLagFleet({ limit: OVERVIEW_TOP });
  return (
    <section className="section" aria-labelledby="overview-groups">
      <h2 id="overview-groups" className="section__title">
        Worst-lagging consumer groups
      </h2>
      <QueryView
        query={fleet}
        errorTitle="Could not load consumer lag"
        isEmpty={(page) => page.count === 0}
        empty={<EmptyState title="No consumer groups sampled yet" />}
      >
        {(page) => (
          <>
            <DataTable
              label="Worst-lagging groups"
              columns={groupColumns}
              rows={page.results}
              getRowId={(row) => String(row.group)}
              filterable={false}
              pagination={false}
            />
            <p className="muted">
              {page.count > page.results.length ? `${page.count} groups in all · ` : ""}
              <Link to="/groups">All consumer groups</Link>
            </p>
          </>
        )}
      </QueryView>
    </section>
  );
}

const alertColumn = createColumnHelper<FiringAlert>();
const alertColumns = [
  alertColumn.accessor("severity", {
    header: "Severity",
    cell: (info) => (
      <span
        className={
          info.getValue() === "critical"
            ? "badge badge--danger"
            : info.getValue() === "warning"
              ? "badge badge--warning"
              : "badge badge--info"
        }
      >
        {info.getValue()}
      </span>
    ),
  }),
  alertColumn.accessor("rule_name", { header: "Rule" }),
  alertColumn.accessor((alert) => [alert.cluster_name, alert.group_name, alert.topic].filter(Boolean).join(" · "), {
    id: "scope",
    header: "Where",
  }),
  alertColumn.accessor((alert) => alert.value_text || alert.status, { id: "value", header: "Value" }),
  alertColumn.accessor((alert) => alert.fired_at ?? "", {
    id: "fired",
    header: "Firing since",
    cell: (info) => (info.getValue() ? <Timestamp value={info.getValue()} relative /> : "—"),
  }),
];

const healthColumn = createColumnHelper<FiringAlert>();
const healthColumns = [
  alertColumns[0]!,
  healthColumn.accessor("cluster_name", { header: "Cluster" }),
  healthColumn.accessor((alert) => (alert.group_name === "cluster" ? "whole cluster" : alert.group_name), {
    id: "subject",
    header: "Where",
  }),
  healthColumn.accessor((alert) => METRIC_LABELS[alert.metric as Metric] ?? alert.metric, {
    id: "problem",
    header: "Problem",
  }),
  healthColumn.accessor("value_text", { header: "Value" }),
  alertColumns[alertColumns.length - 1]!,
];

/** Cluster-health rules that fire now: a broker down, bad partitions, full disks, an unreachable cluster. */
function ClusterHealthAlertsSection() {
  const alerts = useFiringAlerts("cluster_health");
  return (
    <section className="section" aria-labelledby="overview-health-alerts">
      <h2 id="overview-health-alerts" className="section__title">
        Cluster health alerts
      </h2>
      <QueryView
        query={alerts}
        errorTitle="Could not load the cluster health alerts"
        isEmpty={(page) => page.count === 0}
        empty={
          <EmptyState
            title="No cluster health alerts firing"
            description="No broker, partition, disk or reachability rule fires."
          />
        }
      >
        {(page) => (
          <>
            <DataTable
              label="Cluster health alerts"
              columns={healthColumns}
              rows={page.results}
              getRowId={(alert) => String(alert.id)}
              filterable={false}
              pagination={false}
            />
            {page.count > page.results.length ? <p className="muted">{page.count} firing in all</p> : null}
          </>
        )}
      </QueryView>
    </section>
  );
}

function FiringAlertsSection() {
  const alerts = useFiringAlerts("lag");
  return (
    <section className="section" aria-labelledby="overview-alerts">
      <h2 id="overview-alerts" className="section__title">
        Firing alerts
      </h2>
      <QueryView
        query={alerts}
        errorTitle="Could not load the alerts"
        isEmpty={(page) => page.count === 0}
        empty={<EmptyState title="No alerts firing" description="Every alert rule is quiet." />}
      >
        {(page) => (
          <>
            <DataTable
              label="Firing alerts"
              columns={alertColumns}
              rows={page.results}
              getRowId={(alert) => String(alert.id)}
              filterable={false}
              pagination={false}
            />
            <p className="muted">
              {page.count > page.results.length ? `${page.count} firing in all · ` : ""}
              <Link to="/alerts">All alerts</Link>
            </p>
          </>
        )}
      </QueryView>
    </section>
  );
}

function WorkerSection() {
  const overview = useOverview();
  return (
    <QueryView query={overview} errorTitle="Could not load the overview">
      {(data) => (
        <>
          <section
            className={`stat-card stat-card--${data.worker.alive ? "neutral" : "warning"}`}
            aria-label="Background worker"
          >
            <span className="stat-card__label">Background worker</span>
            <span className="stat-card__value">{data.worker.alive ? "Running" : "Not reporting"}</span>
            <span className="muted">
              {data.worker.last_heartbeat ? (
                <>
                  Last heartbeat <Timestamp value={data.worker.last_heartbeat} relative />
                </>
              ) : (
                "No heartbeat received yet"
              )}
            </span>
          </section>
          <p className="muted">Version {data.version}</p>
        </>
      )}
    </QueryView>
  );
}
