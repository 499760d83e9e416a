import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

import { formatTimestamp, userTimeZone } from "../../lib/time";
import { useChartTheme, type ChartTheme } from "./chartTheme";
import { formatCompact } from "./format";
import type { TimeSeriesChartProps } from "./types";

const DEFAULT_HEIGHT = 260;

/**
 * The uPlot canvas behind TimeSeriesChart; loaded on demand so pages without
 * charts do not pay for the library. Re-created when the data or theme
 * changes (cheap at console sizes), resized in place when its box changes.
 */
export default function UPlotTimeSeries({
  label,
  timestamps,
  series,
  formatValue = formatCompact,
  height = DEFAULT_HEIGHT,
}: TimeSeriesChartProps) {
  const boxRef = useRef<HTMLDivElement>(null);
  const tooltipRef = useRef<HTMLDivElement>(null);
  const theme = useChartTheme();

  useEffect(() => {
    const box = boxRef.current;
    const tooltip = tooltipRef.current;
    if (!box || !tooltip) return;
    const data = [
      timestamps as number[],
      ...series.map((line) => line.values as (number | null)[]),
    ] as uPlot.AlignedData;
    const plot = new uPlot(buildOptions(theme, series, formatValue, box.clientWidth, height, tooltip), data, box);
    const resize = new ResizeObserver(() => plot.setSize({ width: box.clientWidth, height }));
    resize.observe(box);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [timestamps, series, formatValue, height, theme]);

  return (
    <div className="chart" role="img" aria-label={label}>
      <div ref={boxRef} className="chart__canvas" />
      <div ref={tooltipRef} className="chart__tooltip" hidden />
    </div>
  );
}

function buildOptions(
  theme: ChartTheme,
  series: TimeSeriesChartProps["series"],
  formatValue: (value: number) => string,
  width: number,
  height: number,
  tooltip: HTMLDivElement,
): uPlot.Options {
  const timeZone = userTimeZone();
  const axis = (values?: uPlot.Axis["values"]): uPlot.Axis => ({
    stroke: theme.muted,
    grid: { stroke: theme.grid, width: 1 },
    ticks: { stroke: theme.grid, width: 1 },
    ...(values ? { values, size: 64 } : {}),
  });
  return {
    width: Math.max(width, 200),
    height,
    // Timestamps arrive in milliseconds; axis labels are drawn in the user's timezone.
    ms: 1,
    tzDate: (ts) => uPlot.tzDate(new Date(ts), timeZone),
    cursor: { drag: { x: true, y: false } },
    legend: { live: true },
    axes: [axis(), axis((_plot, ticks) => ticks.map((tick) => formatValue(tick)))],
    scales: { y: { range: (_plot, min, max) => [Math.min(0, min), max > 0 ? max * 1.05 : 1] } },
    series: [
      { label: "Time", value: (_plot, ts) => (ts == null ? "—" : formatTimestamp(ts, timeZone)) },
      ...series.map((line, index) => ({
        label: line.label,
        show: !line.hidden,
        stroke: theme.palette[index % theme.palette.length],
        width: 1.5,
        spanGaps: false,
        points: { show: false },
        value: (_plot: uPlot, value: number | null) => (value == null ? "—" : formatValue(value)),
      })),
    ],
    hooks: { setCursor: [(plot) => placeTooltip(plot, tooltip, formatValue, timeZone)] },
  };
}

/** A small box next to the cursor with the time and each visible series' value. */
function placeTooltip(plot: uPlot, tooltip: HTMLDivElement, formatValue: (value: number) => string, timeZone: string) {
  const index = plot.cursor.idx;
  const { left, top } = plot.cursor;
  if (index == null || left == null || top == null || left < 0) {
    tooltip.hidden = true;
    return;
  }
  const rows = plot.series.slice(1).flatMap((line, seriesIndex) => {
    const value = plot.data[seriesIndex + 1]?.[index];
    if (!line.show || value == null) return [];
    return [`${line.label ?? ""}: ${formatValue(value)}`];
  });
  const time = plot.data[0][index];
  tooltip.replaceChildren(
    ...[time == null ? "" : formatTimestamp(time, timeZone), ...rows].map((text, rowIndex) => {
      const row = document.createElement("div");
      row.textContent = text;
      if (rowIndex === 0) row.className = "chart__tooltip-time";
      return row;
    }),
  );
  tooltip.hidden = false;
  // Flip to the left of the cursor past the middle so the box stays inside the chart.
  const plotLeft = plot.over.offsetLeft;
  const flip = left > plot.over.clientWidth / 2;
  tooltip.style.top = `${top + plot.over.offsetTop + 12}px`;
  tooltip.style.left = flip ? "" : `${left + plotLeft + 12}px`;
  tooltip.style.right = flip ? `${plot.root.clientWidth - (left + plotLeft) + 12}px` : "";
}
