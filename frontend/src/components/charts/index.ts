export { BarChart } from "./BarChart";
export { formatCompact, formatSeconds } from "./format";
export { TimeSeriesChart } from "./TimeSeriesChart";
export type { Bar, BarChartProps, TimeSeries, TimeSeriesChartProps } from "./types";
