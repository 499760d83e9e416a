/** A horizontal bar from 0 to 100 %, named for screen readers by `label`. */
export function ProgressBar({ percent, label, valueText }: { percent: number; label: string; valueText?: string }) {
  const clamped = Math.max(0, Math.min(100, percent));
  return (
    <div
      className="progress"
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={clamped}
      aria-valuetext={valueText ?? `${clamped.toFixed(0)}%`}
    >
      <div className="progress__bar" style={{ width: `${clamped}%` }} />
    </div>
  );
}
