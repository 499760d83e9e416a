import type { ColumnHelper } from "@tanstack/react-table";

/** The last column of a team's list: a Remove button on each row. */
export function removeColumn<Row>(column: ColumnHelper<Row>, onRemove: (row: Row) => void) {
  return column.display({
    id: "actions",
    header: () => <span className="visually-hidden">Actions</span>,
    cell: (info) => (
      <button type="button" className="button button--danger" onClick={() => onRemove(info.row.original)}>
        Remove
      </button>
    ),
  });
}
