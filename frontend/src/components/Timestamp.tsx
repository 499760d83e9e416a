import { formatRelativeTime, formatTimestamp } from "../lib/time";

interface TimestampProps {
  value: string | number | Date;
  relative?: boolean;
}

/**
 * A point in time in the viewer's own timezone, with the exact UTC instant in
 * the tooltip so people in different places can compare notes.
 */
export function Timestamp({ value, relative = false }: TimestampProps) {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return <span>—</span>;
  return (
    <time dateTime={date.toISOString()} title={date.toISOString()}>
      {relative ? formatRelativeTime(date) : formatTimestamp(date)}
    </time>
  );
}
