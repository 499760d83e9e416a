import { Link } from "react-router";

interface StatCardProps {
  label: string;
  value: number;
  to: string;
  /** Draws attention when the number means something needs looking at. */
  tone?: "neutral" | "warning";
}

const numberFormat = new Intl.NumberFormat();

export function StatCard({ label, value, to, tone = "neutral" }: StatCardProps) {
  const formatted = numberFormat.format(value);
  return (
    <Link to={to} className={`stat-card stat-card--${tone}`} aria-label={`${label}: ${formatted}`}>
      <span className="stat-card__label">{label}</span>
      <span className="stat-card__value">{formatted}</span>
    </Link>
  );
}
