import { lazy, Suspense, useState } from "react";

import { formatTimestamp } from "../../lib/time";
import { EmptyState, LoadingState } from "../states";
import "./charts.css";
import { formatCompact } from "./format";
import type { TimeSeriesChartProps } from "./types";

const UPlotTimeSeries = lazy(() => import("./UPlotTimeSeries"));

let canvasSupport: boolean | undefined;

/** jsdom (unit tests) and very old browsers have no 2D canvas; they get the data table alone. */
function canDrawCanvas(): boolean {
  if (canvasSupport === undefined) {
    try {
      canvasSupport = !navigator.userAgent.includes("jsdom") && !!document.createElement("canvas").getContext("2d");
    } catch {
      canvasSupport = false;
    }
  }
  return canvasSupport;
}

/**
 * A line chart over time: responsive, follows the theme, legend entries
 * toggle their series, a tooltip follows the cursor, times are in the user's
 * timezone. The numbers are also available as a table for screen readers and
 * copying.
 */
export function TimeSeriesChart(props: TimeSeriesChartProps) {
  const { label, timestamps, series, emptyTitle = "No data in this range" } = props;
  if (timestamps.length === 0 || series.length === 0) return <EmptyState title={emptyTitle} />;
  return (
    <figure className="chart-figure">
      {canDrawCanvas() ? (
        <Suspense fallback={<LoadingState label="Drawing the chart…" />}>
          <UPlotTimeSeries {...props} />
        </Suspense>
      ) : null}
      <ChartDataTable {...props} label={label} />
    </figure>
  );
}

function ChartDataTable({ label, timestamps, series, formatValue = formatCompact }: TimeSeriesChartProps) {
  const [open, setOpen] = useState(false);
  return (
    <details className="chart-data" onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>Show the data as a table</summary>
      {open ? (
        <div className="data-table__scroll chart-data__scroll">
          <table className="table" aria-label={`${label} data`}>
            <thead>
              <tr>
                <th scope="col">Time</th>
                {series.map((line) => (
                  <th key={line.label} scope="col">
                    {line.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {timestamps.map((ts, index) => (
                <tr key={ts}>
                  <td>{formatTimestamp(ts)}</td>
                  {series.map((line) => {
                    const value = line.values[index];
                    return <td key={line.label}>{value == null ? "—" : formatValue(value)}</td>;
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </details>
  );
}
