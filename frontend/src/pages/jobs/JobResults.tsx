import { createColumnHelper } from "@tanstack/react-table";
import { useMemo } from "react";

import { downloadUrl, type JobResult } from "../../api/hooks/jobs";
import { BarChart, TimeSeriesChart } from "../../components/charts";
import { DataTable } from "../../components/DataTable";
import { EmptyState } from "../../components/states";

type ResultChart = JobResult["charts"][number];
type ResultTable = JobResult["tables"][number];

const NUMBER = new Intl.NumberFormat(undefined, { maximumFractionDigits: 3 });

export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "number") return NUMBER.format(value);
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function humanize(name: string): string {
  const words = name.replaceAll("_", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** What a finished run produced: metrics, charts, tables, documents and files, in the job's order. */
export function JobResults({ run, result }: { run: number; result: JobResult }) {
  const metrics = Object.entries(result.metrics);
  const empty =
    metrics.length + result.charts.length + result.tables.length + result.documents.length + result.files.length === 0;
  if (empty) return <EmptyState title="No results" description="The job produced nothing to show." />;
  return (
    <div className="job-results">
      {metrics.length > 0 ? (
        <dl className="details" aria-label="Metrics">
          {metrics.map(([name, value]) => (
            <div key={name} style={{ display: "contents" }}>
              <dt>{humanize(name)}</dt>
              <dd>{formatCell(value)}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      {result.charts.map((chart) => (
        <section key={chart.name} className="job-result" aria-label={humanize(chart.name)}>
          <h3 className="job-result__title">{humanize(chart.name)}</h3>
          <ResultChartView chart={chart} />
        </section>
      ))}
      {result.tables.map((table) => (
        <section key={table.name} className="job-result" aria-label={humanize(table.name)}>
          <h3 className="job-result__title">{humanize(table.name)}</h3>
          <ResultTableView table={table} />
        </section>
      ))}
      {result.documents.map((document) => (
        <section key={document.name} className="job-result" aria-label={humanize(document.name)}>
          <h3 className="job-result__title">{humanize(document.name)}</h3>
          <pre className="code-block">{JSON.stringify(document.content, null, 2)}</pre>
        </section>
      ))}
      {result.files.length > 0 ? (
        <section className="job-result" aria-label="Files">
          <h3 className="job-result__title">Files</h3>
          <ul>
            {result.files.map((path) => (
              <li key={path}>
                <a href={downloadUrl(run, path)} download className="mono">
                  {path}
                </a>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </div>
  );
}

/** Instants for a line chart's x values, or null when they are categories. */
export function timesOf(x: unknown[]): number[] | null {
  if (x.length === 0) return null;
  const times = x.map((value) => (typeof value === "string" ? Date.parse(value) : NaN));
  return times.every((time) => !Number.isNaN(time)) ? times : null;
}

function ResultChartView({ chart }: { chart: ResultChart }) {
  const times = useMemo(() => (chart.kind === "line" ? timesOf(chart.x) : null), [chart]);
  const series = useMemo(() => chart.series.map((line) => ({ label: line.name, values: line.values })), [chart.series]);
  if (times) return <TimeSeriesChart label={humanize(chart.name)} timestamps={times} series={series} />;
  // Categories (partitions, keys, checks, age buckets): one bar chart per series.
  return (
    <>
      {chart.series.map((line) => (
        <BarChart
          key={line.name}
          label={`${humanize(chart.name)}: ${line.name}${chart.x_label ? ` by ${chart.x_label}` : ""}`}
          bars={chart.x.map((x, index) => ({ label: formatCell(x), value: line.values[index] ?? 0 }))}
        />
      ))}
    </>
  );
}

type Row = unknown[];
const column = createColumnHelper<Row>();

function ResultTableView({ table }: { table: ResultTable }) {
  const columns = useMemo(
    () =>
      table.columns.map((name, index) =>
        column.accessor((row) => row[index] as string | number | null, {
          id: `${index}:${name}`,
          header: name,
          cell: (info) => formatCell(info.getValue()),
        }),
      ),
    [table.columns],
  );
  return (
    <DataTable
      label={humanize(table.name)}
      columns={columns}
      rows={table.rows}
      filterable={table.rows.length > 10}
      pagination={{ pageSize: 20 }}
      emptyTitle="No rows"
    />
  );
}
