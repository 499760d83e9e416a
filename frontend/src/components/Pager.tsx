interface PagerProps {
  /** Names what is paged, for screen readers, e.g. "Audit events". */
  label: string;
  offset: number;
  limit: number;
  count: number;
  onOffsetChange: (offset: number) => void;
}

/** Pages through a list the server paginates with limit and offset. */
export function Pager({ label, offset, limit, count, onOffsetChange }: PagerProps) {
  if (count === 0) return null;
  const first = offset + 1;
  const last = Math.min(offset + limit, count);
  return (
    <nav className="data-table__pager" aria-label={`${label} pages`}>
      <button
        type="button"
        className="button"
        disabled={offset <= 0}
        onClick={() => onOffsetChange(Math.max(0, offset - limit))}
      >
        Previous
      </button>
      <span>
        {first}–{last} of {count}
      </span>
      <button
        type="button"
        className="button"
        disabled={offset + limit >= count}
        onClick={() => onOffsetChange(offset + limit)}
      >
        Next
      </button>
    </nav>
  );
}
