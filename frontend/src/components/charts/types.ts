/** One line of a time-series chart: a value per timestamp, null where there is no sample. */
export interface TimeSeries {
  label: string;
  values: readonly (number | null)[];
  /** Starts hidden; the legend shows it greyed out and a click brings it back. */
  hidden?: boolean;
}

export interface TimeSeriesChartProps {
  /** Names the chart for screen readers and the data table, e.g. "Lag in messages". */
  label: string;
  /** Milliseconds since the epoch, ascending; every series has one value per timestamp. */
  timestamps: readonly number[];
  series: readonly TimeSeries[];
  /** Formats axis ticks, tooltip and legend values, e.g. as "1.2k" or "3 min". */
  formatValue?: (value: number) => string;
  height?: number;
  /** Shown instead of an empty chart. */
  emptyTitle?: string;
}

export interface Bar {
  label: string;
  value: number;
}

export interface BarChartProps {
  label: string;
  bars: readonly Bar[];
  formatValue?: (value: number) => string;
  /** Horizontal bars suit long labels (keys, topic names). */
  orientation?: "horizontal" | "vertical";
}
