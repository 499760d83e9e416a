import {
  flexRender,
  getCoreRowModel,
  getFilteredRowModel,
  getPaginationRowModel,
  getSortedRowModel,
  useReactTable,
  type ColumnDef,
  type PaginationState,
  type SortDirection,
  type SortingState,
} from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useId, useRef, useState } from "react";

import { EmptyState } from "./states";

/** Unpaginated tables longer than this render only the rows in view. */
export const VIRTUALIZE_ABOVE_ROWS = 200;
const ROW_HEIGHT_PX = 40;
const VIRTUAL_VIEWPORT_PX = 560;

export interface DataTableProps<Row> {
  /** Names the table for screen readers, e.g. "Topics". */
  label: string;
  // Column value types differ per column, so the list is heterogeneous.
  columns: ColumnDef<Row, any>[];
  rows: Row[];
  getRowId?: (row: Row, index: number) => string;
  initialSorting?: SortingState;
  /** Show the text box that filters rows on every column's text. */
  filterable?: boolean;
  filterPlaceholder?: string;
  /** Rows per page, or false to show every row (virtualized when long). */
  pagination?: { pageSize: number } | false;
  emptyTitle?: string;
  emptyDescription?: string;
}

const ARIA_SORT: Record<SortDirection, "ascending" | "descending"> = { asc: "ascending", desc: "descending" };
const SORT_ARROW: Record<SortDirection, string> = { asc: "▲", desc: "▼" };

/**
 * The console's one table: click a header to sort, type to filter, page
 * through or scroll long lists. Sorting, filtering and paging run in the
 * browser on the rows given.
 */
export function DataTable<Row>({
  label,
  columns,
  rows,
  getRowId,
  initialSorting = [],
  filterable = true,
  filterPlaceholder = "Filter…",
  pagination = { pageSize: 25 },
  emptyTitle = "Nothing here yet",
  emptyDescription,
}: DataTableProps<Row>) {
  const filterId = useId();
  const [sorting, setSorting] = useState<SortingState>(initialSorting);
  const [globalFilter, setGlobalFilter] = useState("");
  const [paging, setPaging] = useState<PaginationState>({
    pageIndex: 0,
    pageSize: pagination ? pagination.pageSize : rows.length,
  });

  const table = useReactTable({
    data: rows,
    columns,
    getRowId,
    state: { sorting, globalFilter, ...(pagination ? { pagination: paging } : {}) },
    onSortingChange: setSorting,
    onGlobalFilterChange: setGlobalFilter,
    onPaginationChange: setPaging,
    globalFilterFn: "includesString",
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    getFilteredRowModel: getFilteredRowModel(),
    ...(pagination ? { getPaginationRowModel: getPaginationRowModel() } : {}),
  });

  const visibleRows = table.getRowModel().rows;
  const matchingCount = table.getFilteredRowModel().rows.length;
  const virtualized = !pagination && visibleRows.length > VIRTUALIZE_ABOVE_ROWS;

  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: virtualized ? visibleRows.length : 0,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT_PX,
    overscan: 10,
    // Lets the first paint show a screenful before the scroll box is measured.
    initialRect: { width: 0, height: VIRTUAL_VIEWPORT_PX },
  });

  if (rows.length === 0) {
    return <EmptyState title={emptyTitle} description={emptyDescription} />;
  }

  const virtualItems = virtualized ? virtualizer.getVirtualItems() : [];
  const renderedRows = virtualized ? virtualItems.flatMap((item) => visibleRows[item.index] ?? []) : visibleRows;
  const paddingTop = virtualized ? (virtualItems[0]?.start ?? 0) : 0;
  const paddingBottom = virtualized ? virtualizer.getTotalSize() - (virtualItems.at(-1)?.end ?? 0) : 0;
  const columnCount = table.getVisibleLeafColumns().length;

  return (
    <div className="data-table">
      {filterable ? (
        <div className="data-table__toolbar">
          <label htmlFor={filterId} className="visually-hidden">
            Filter {label.toLowerCase()}
          </label>
          <input
            id={filterId}
            type="search"
            className="input data-table__filter"
            placeholder={filterPlaceholder}
            value={globalFilter}
            onChange={(event) => setGlobalFilter(event.target.value)}
          />
          <span className="data-table__count">
            {matchingCount === rows.length
              ? `${rows.length} ${rows.length === 1 ? "row" : "rows"}`
              : `${matchingCount} of ${rows.length} rows`}
          </span>
        </div>
      ) : null}

      <div
        ref={scrollRef}
        className="data-table__scroll"
        style={virtualized ? { maxHeight: VIRTUAL_VIEWPORT_PX, overflowY: "auto" } : undefined}
      >
        <table className="table" aria-label={label}>
          <thead>
            {table.getHeaderGroups().map((headerGroup) => (
              <tr key={headerGroup.id}>
                {headerGroup.headers.map((header) => {
                  const direction = header.column.getIsSorted();
                  const content = header.isPlaceholder
                    ? null
                    : flexRender(header.column.columnDef.header, header.getContext());
                  return (
                    <th
                      key={header.id}
                      colSpan={header.colSpan}
                      aria-sort={direction ? ARIA_SORT[direction] : undefined}
                    >
                      {header.column.getCanSort() ? (
                        <button type="button" className="table__sort" onClick={header.column.getToggleSortingHandler()}>
                          {content}
                          <span className="table__sort-arrow" aria-hidden="true">
                            {direction ? SORT_ARROW[direction] : "↕"}
                          </span>
                        </button>
                      ) : (
                        content
                      )}
                    </th>
                  );
                })}
              </tr>
            ))}
          </thead>
          <tbody>
            {paddingTop > 0 ? (
              <tr aria-hidden="true">
                <td colSpan={columnCount} style={{ height: paddingTop, padding: 0 }} />
              </tr>
            ) : null}
            {renderedRows.map((row) => (
              <tr key={row.id} style={virtualized ? { height: ROW_HEIGHT_PX } : undefined}>
                {row.getVisibleCells().map((cell) => (
                  <td key={cell.id}>{flexRender(cell.column.columnDef.cell, cell.getContext())}</td>
                ))}
              </tr>
            ))}
            {paddingBottom > 0 ? (
              <tr aria-hidden="true">
                <td colSpan={columnCount} style={{ height: paddingBottom, padding: 0 }} />
              </tr>
            ) : null}
            {matchingCount === 0 ? (
              <tr>
                <td colSpan={columnCount} className="table__no-match">
                  No rows match “{globalFilter}”.
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>

      {pagination && table.getPageCount() > 1 ? (
        <nav className="data-table__pager" aria-label={`${label} pages`}>
          <button
            type="button"
            className="button"
            onClick={() => table.previousPage()}
            disabled={!table.getCanPreviousPage()}
          >
            Previous
          </button>
          <span>
            Page {table.getState().pagination.pageIndex + 1} of {table.getPageCount()}
          </span>
          <button type="button" className="button" onClick={() => table.nextPage()} disabled={!table.getCanNextPage()}>
            Next
          </button>
        </nav>
      ) : null}
    </div>
  );
}
