import { createColumnHelper } from "@tanstack/react-table";
import { useMemo } from "react";
import { useSearchParams } from "react-router";

import {
  LAG_RANGES,
  useGroupLag,
  useLagChart,
  type GroupLagDetail,
  type LagChart,
  type LagRange,
  type PartitionHealth,
} from "../../api/hooks/lag";
import { formatCompact, formatSeconds, TimeSeriesChart, type TimeSeries } from "../../components/charts";
import { DataTable } from "../../components/DataTable";
import { Timestamp } from "../../components/Timestamp";
import { EmptyState, QueryView } from "../../components/states";
import { LagStatusBadge } from "./LagStatusBadge";

const NUMBER = new Intl.NumberFormat();
type Metric = "messages" | "seconds";
/** Partitions beyond this start hidden in the chart; the legend brings any of them back. */
const SHOWN_PARTITIONS = 8;

const orDash = (value: number | null | undefined, format: (value: number) => string) =>
  value == null ? "—" : format(value);
const rate = (value: number) => `${formatCompact(value)}/s`;

/**
 * The group's health from the lag sampler: status with its reason, lag in messages and time,
 * rates, a chart over time and every partition's status.
 */
export function LagSection({ group }: { group: number }) {
  const lag = useGroupLag(group);
  return (
    <section className="section" aria-labelledby="group-health">
      <h2 id="group-health" className="section__title">
        Health and lag history
      </h2>
      <QueryView query={lag} loadingLabel="Loading the group's health…" errorTitle="Could not load the group's health">
        {(detail) =>
          detail === null ? (
            <EmptyState
              title="Not sampled yet"
              description="The lag sampler reads every cluster every few seconds; this group's health appears after its next run."
            />
          ) : (
            <>
              <HealthSummary detail={detail} />
              <LagChartPanel group={group} />
              <PartitionHealthTable partitions={detail.partitions} />
            </>
          )
        }
      </QueryView>
    </section>
  );
}

function HealthSummary({ detail }: { detail: GroupLagDetail }) {
  const seconds = detail.lag_seconds == null ? "—" : formatSeconds(detail.lag_seconds);
  return (
    <dl className="details">
      <dt>Status</dt>
      <dd>
        <LagStatusBadge status={detail.status} /> {detail.reason}
      </dd>
      <dt>Lag</dt>
      <dd>
        {NUMBER.format(detail.lag_messages ?? 0)} messages · {detail.lag_seconds_is_lower_bound ? "at least " : ""}
        {seconds}
      </dd>
      <dt>Time to catch up</dt>
      <dd>{orDash(detail.time_to_catch_up_seconds, formatSeconds)}</dd>
      <dt>Consume / produce rate</dt>
      <dd>
        {orDash(detail.consume_rate, rate)} / {orDash(detail.produce_rate, rate)}
      </dd>
      <dt>Sampled</dt>
      <dd>{detail.observed_at ? <Timestamp value={detail.observed_at} /> : "—"}</dd>
    </dl>
  );
}

function isRange(value: string | null): value is LagRange {
  return value !== null && value in LAG_RANGES;
}

/** Columnar chart data as TimeSeriesChart series: the total first, then one line per partition. */
export function chartSeries(chart: LagChart, metric: Metric): { timestamps: number[]; series: TimeSeries[] } {
  const key = metric === "messages" ? "lag_messages" : "lag_seconds";
  return {
    timestamps: chart.times.map((time) => new Date(time).getTime()),
    series: [
      { label: "total", values: chart.total[key] },
      ...chart.partitions.map((partition, index) => ({
        label: `${partition.topic}-${partition.partition}`,
        values: partition[key],
        hidden: index >= SHOWN_PARTITIONS,
      })),
    ],
  };
}

function LagChartPanel({ group }: { group: number }) {
  // Range and metric are in the URL so a link shows the same chart.
  const [searchParams, setSearchParams] = useSearchParams();
  const rangeParam = searchParams.get("range");
  const range: LagRange = isRange(rangeParam) ? rangeParam : "1h";
  const metric: Metric = searchParams.get("metric") === "seconds" ? "seconds" : "messages";
  const chart = useLagChart(group, range);
  const data = useMemo(() => (chart.data ? chartSeries(chart.data, metric) : null), [chart.data, metric]);

  function choose(name: "range" | "metric", value: string) {
    setSearchParams(
      (current) => {
        const params = new URLSearchParams(current);
        params.set(name, value);
        return params;
      },
      { replace: true },
    );
  }

  return (
    <div className="lag-chart">
      <div className="lag-chart__controls">
        <div role="group" aria-label="Time range" className="segmented">
          {Object.keys(LAG_RANGES).map((value) => (
            <button
              key={value}
              type="button"
              className="button"
              aria-pressed={value === range}
              onClick={() => choose("range", value)}
            >
              {value}
            </button>
          ))}
        </div>
        <div role="group" aria-label="Measure" className="segmented">
          {(["messages", "seconds"] as const).map((value) => (
            <button
              key={value}
              type="button"
              className="button"
              aria-pressed={value === metric}
              onClick={() => choose("metric", value)}
            >
              Lag in {value}
            </button>
          ))}
        </div>
      </div>
      <QueryView query={chart} loadingLabel="Loading the lag history…" errorTitle="Could not load the lag history">
        {() =>
          data ? (
            <TimeSeriesChart
              label={`Lag in ${metric} over the last ${range}`}
              timestamps={data.timestamps}
              series={data.series}
              formatValue={metric === "seconds" ? formatSeconds : formatCompact}
              emptyTitle={
                range === "1h"
                  ? "No lag samples in this range yet"
                  : "No rollups in this range yet: ranges beyond an hour use 1-minute rollups, written as each minute ends"
              }
            />
          ) : null
        }
      </QueryView>
    </div>
  );
}

const column = createColumnHelper<PartitionHealth>();
const columns = [
  column.accessor((row) => `${row.topic}-${row.partition}`, {
    id: "partition",
    header: "Partition",
    cell: (info) => <span className="mono">{info.getValue()}</span>,
  }),
  column.accessor("status", {
    header: "Status",
    cell: (info) => <LagStatusBadge status={info.getValue()} reason={info.row.original.reason} />,
  }),
  column.accessor("reason", { header: "Why" }),
  column.accessor("lag_messages", { header: "Lag (messages)", cell: (info) => NUMBER.format(info.getValue()) }),
  column.accessor((row) => row.lag_seconds ?? -1, {
    id: "seconds",
    header: "Lag (time)",
    cell: (info) =>
      info.row.original.lag_seconds == null
        ? "—"
        : `${info.row.original.lag_seconds_is_lower_bound ? "≥ " : ""}${formatSeconds(info.row.original.lag_seconds)}`,
  }),
  column.accessor((row) => row.consume_rate ?? -1, {
    id: "consume",
    header: "Consumed",
    cell: (info) => orDash(info.row.original.consume_rate, rate),
  }),
  column.accessor((row) => row.produce_rate ?? -1, {
    id: "produce",
    header: "Produced",
    cell: (info) => orDash(info.row.original.produce_rate, rate),
  }),
  column.accessor((row) => row.time_to_catch_up_seconds ?? -1, {
    id: "catch-up",
    header: "Catch up in",
    cell: (info) => orDash(info.row.original.time_to_catch_up_seconds, formatSeconds),
  }),
];

function PartitionHealthTable({ partitions }: { partitions: PartitionHealth[] }) {
  return (
    <DataTable
      label="Partition health"
      columns={columns}
      rows={partitions}
      getRowId={(row) => `${row.topic}:${row.partition}`}
      filterable={partitions.length > 10}
      emptyTitle="No partitions sampled"
    />
  );
}
