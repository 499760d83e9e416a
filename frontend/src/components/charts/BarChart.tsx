import "./charts.css";
import { formatCompact } from "./format";
import type { BarChartProps } from "./types";

const BAR_THICKNESS = 22;
const GAP = 6;

/**
 * Bars for small categorical results (top keys, bytes per partition, an age
 * histogram). Plain SVG sized by CSS: a few dozen bars need no canvas, and
 * every bar is a labelled element screen readers and tests can read.
 */
export function BarChart({ label, bars, formatValue = formatCompact, orientation = "horizontal" }: BarChartProps) {
  if (bars.length === 0) return <p className="muted">No values.</p>;
  const max = Math.max(...bars.map((bar) => bar.value), 0) || 1;
  if (orientation === "vertical") return <VerticalBars label={label} bars={bars} max={max} formatValue={formatValue} />;
  return (
    <ul className="bar-chart" aria-label={label}>
      {bars.map((bar, index) => (
        <li key={`${bar.label}-${index}`} className="bar-chart__row">
          <span className="bar-chart__label mono" title={bar.label}>
            {bar.label}
          </span>
          <svg className="bar-chart__track" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
            <rect className="bar-chart__bar" x="0" y="0" height="10" width={(Math.max(bar.value, 0) / max) * 100} />
          </svg>
          <span className="bar-chart__value">{formatValue(bar.value)}</span>
        </li>
      ))}
    </ul>
  );
}

function VerticalBars({
  label,
  bars,
  max,
  formatValue,
}: {
  label: string;
  bars: BarChartProps["bars"];
  max: number;
  formatValue: (value: number) => string;
}) {
  const width = bars.length * (BAR_THICKNESS + GAP);
  const height = 120;
  return (
    <figure className="bar-chart bar-chart--vertical">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label} preserveAspectRatio="none">
        {bars.map((bar, index) => {
          const barHeight = (Math.max(bar.value, 0) / max) * height;
          return (
            <rect
              key={`${bar.label}-${index}`}
              className="bar-chart__bar"
              x={index * (BAR_THICKNESS + GAP)}
              y={height - barHeight}
              width={BAR_THICKNESS}
              height={barHeight}
            >
              <title>{`${bar.label}: ${formatValue(bar.value)}`}</title>
            </rect>
          );
        })}
      </svg>
      <figcaption className="bar-chart__axis">
        {bars.map((bar, index) => (
          <span key={`${bar.label}-${index}`} title={`${bar.label}: ${formatValue(bar.value)}`}>
            {bar.label}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
