import {
  flexRender,
  getCoreRowModel,
  getSortedRowModel,
  useReactTable,
  type ColumnDef,
  type SortingState,
} from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useMemo, useRef, useState } from "react";

import type { TopicMessage } from "../../api/types";
import { VIRTUALIZE_ABOVE_ROWS } from "../../components/DataTable";
import { Timestamp } from "../../components/Timestamp";
import { formatBytes } from "../../lib/bytes";
import { messageAsJson, payloadText } from "./exportMessages";
import { formatLabel, MessagePayloadView } from "./MessagePayloadView";

const ROW_PX = 34;
const VIEWPORT_PX = 600;
const PREVIEW_CHARS = 160;

export const messageId = (message: TopicMessage) => `${message.partition}-${message.offset}`;

function preview(text: string): string {
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
}

function PreviewCell({ payload }: { payload: TopicMessage["value"] }) {
  if (payload.encoding === "null" || payload.data === null) return <span className="muted">null</span>;
  const decoded = payload.decoded;
  return (
    <span className="message-table__preview mono" title={payloadText(payload).slice(0, 2000)}>
      {decoded ? (
        <span className={decoded.error ? "badge badge--danger" : "badge"}>
          {decoded.error ? (decoded.format ? "undecodable" : "schema id not found") : formatLabel(decoded.format)}
        </span>
      ) : payload.encoding === "base64" ? (
        <span className="badge">base64</span>
      ) : null}{" "}
      {preview(payloadText(payload))}
    </span>
  );
}

const COLUMNS: ColumnDef<TopicMessage, unknown>[] = [
  { id: "partition", header: "Partition", accessorKey: "partition", size: 92 },
  { id: "offset", header: "Offset", accessorKey: "offset", size: 90 },
  {
    id: "timestamp",
    header: "Timestamp",
    accessorFn: (message) => Date.parse(message.timestamp),
    cell: ({ row }) => <Timestamp value={row.original.timestamp} />,
    size: 250,
  },
  {
    id: "key",
    header: "Key",
    accessorFn: (message) => payloadText(message.key),
    cell: ({ row }) => <PreviewCell payload={row.original.key} />,
    size: 0, // a quarter of what the fixed columns leave (see the colgroup)
  },
  {
    id: "value",
    header: "Value",
    accessorFn: (message) => payloadText(message.value),
    cell: ({ row }) => <PreviewCell payload={row.original.value} />,
  },
  { id: "headers", header: "Headers", accessorFn: (message) => message.headers.length, size: 84 },
  {
    id: "size",
    header: "Size",
    accessorKey: "size",
    cell: ({ row }) => formatBytes(row.original.size),
    size: 84,
  },
];

async function copy(text: string, label: string, setNote: (note: string) => void) {
  try {
    await navigator.clipboard.writeText(text);
    setNote(`${label} copied.`);
  } catch {
    setNote(`${label} could not be copied: the browser refused the clipboard.`);
  }
}

function MessageDetails({ message }: { message: TopicMessage }) {
  const [note, setNote] = useState("");
  return (
    <div className="message-table__details">
      <div className="message-table__actions">
        <button
          type="button"
          className="button button--small"
          onClick={() => void copy(payloadText(message.value), "Value", setNote)}
        >
          Copy value
        </button>
        <button
          type="button"
          className="button button--small"
          onClick={() => void copy(payloadText(message.key), "Key", setNote)}
        >
          Copy key
        </button>
        <button
          type="button"
          className="button button--small"
          onClick={() => void copy(JSON.stringify(messageAsJson(message), null, 2), "Record", setNote)}
        >
          Copy as JSON
        </button>
        <span role="status" className="muted">
          {note}
        </span>
      </div>
      <MessagePayloadView label="Key" payload={message.key} />
      <MessagePayloadView label="Value" payload={message.value} />
      {message.headers.length > 0 ? (
        <dl className="message__headers" aria-label="Headers">
          {message.headers.map((header, index) => (
            <div key={index}>
              <dt className="mono">{header.key}</dt>
              <dd className="mono">
                {header.value.encoding === "null" ? (
                  <span className="muted">null</span>
                ) : (
                  <>
                    {header.value.encoding === "base64" ? <span className="badge">base64</span> : null}{" "}
                    {header.value.data}
                  </>
                )}
              </dd>
            </div>
          ))}
        </dl>
      ) : null}
    </div>
  );
}

/**
 * The records as a dense table: one line each, sortable by any column; long
 * results render only where the scroll box shows them (thousands stay fast). A
 * row's toggle opens its key, value (decoded, JSON pretty-printed) and
 * headers, with buttons that copy them.
 */
export function MessageTable({ messages, newestFirst }: { messages: TopicMessage[]; newestFirst: boolean }) {
  const [sorting, setSorting] = useState<SortingState>([]);
  const [expanded, setExpanded] = useState<Set<string>>(() => new Set());
  const ordered = useMemo(() => (newestFirst ? [...messages].reverse() : messages), [messages, newestFirst]);
  const table = useReactTable({
    data: ordered,
    columns: COLUMNS,
    getRowId: messageId,
    state: { sorting },
    onSortingChange: setSorting,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
  });
  const rows = table.getRowModel().rows;
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualized = rows.length > VIRTUALIZE_ABOVE_ROWS;
  const virtualizer = useVirtualizer({
    count: virtualized ? rows.length : 0,
    getScrollElement: () => scrollRef.current,
    estimateSize: (index) => (expanded.has(rows[index]?.id ?? "") ? ROW_PX * 8 : ROW_PX),
    overscan: 12,
    initialRect: { width: 0, height: VIEWPORT_PX },
    getItemKey: (index) => rows[index]?.id ?? index,
  });
  const items = virtualized ? virtualizer.getVirtualItems() : rows.map((_row, index) => ({ index, start: 0, end: 0 }));
  const paddingTop = virtualized ? (items[0]?.start ?? 0) : 0;
  const paddingBottom = virtualized ? virtualizer.getTotalSize() - (items.at(-1)?.end ?? 0) : 0;
  const columnCount = COLUMNS.length + 1;

  function toggle(id: string) {
    setExpanded((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  }

  return (
    <div ref={scrollRef} className="message-table" style={{ maxHeight: VIEWPORT_PX }}>
      <table className="table table--dense" aria-label="Messages" aria-rowcount={rows.length}>
        <colgroup>
          <col style={{ width: 32 }} />
          {table.getVisibleLeafColumns().map((column) => (
            <col
              key={column.id}
              style={column.id === "value" ? undefined : { width: column.id === "key" ? "16%" : column.getSize() }}
            />
          ))}
        </colgroup>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              <th>
                <span className="visually-hidden">Details</span>
              </th>
              {group.headers.map((header) => {
                const direction = header.column.getIsSorted();
                return (
                  <th
                    key={header.id}
                    aria-sort={direction ? (direction === "asc" ? "ascending" : "descending") : undefined}
                  >
                    <button type="button" className="table__sort" onClick={header.column.getToggleSortingHandler()}>
                      {flexRender(header.column.columnDef.header, header.getContext())}
                      <span className="table__sort-arrow" aria-hidden="true">
                        {direction === "asc" ? "▲" : direction === "desc" ? "▼" : "↕"}
                      </span>
                    </button>
                  </th>
                );
              })}
            </tr>
          ))}
        </thead>
        {paddingTop > 0 ? (
          <tbody aria-hidden="true">
            <tr>
              <td colSpan={columnCount} style={{ height: paddingTop, padding: 0 }} />
            </tr>
          </tbody>
        ) : null}
        {items.map((item) => {
          const row = rows[item.index];
          if (!row) return null;
          const open = expanded.has(row.id);
          return (
            // One body per record, measured as a whole: an opened record is taller.
            <tbody key={row.id} ref={virtualized ? virtualizer.measureElement : undefined} data-index={item.index}>
              <tr
                className={open ? "message-table__row message-table__row--open" : "message-table__row"}
                aria-rowindex={item.index + 1}
              >
                <td>
                  <button
                    type="button"
                    className="message-table__toggle"
                    aria-expanded={open}
                    aria-label={`Details of partition ${row.original.partition} offset ${row.original.offset}`}
                    onClick={() => toggle(row.id)}
                  >
                    {open ? "▾" : "▸"}
                  </button>
                </td>
                {row.getVisibleCells().map((cell) => (
                  <td key={cell.id} className={`message-table__cell--${cell.column.id}`}>
                    {flexRender(cell.column.columnDef.cell, cell.getContext())}
                  </td>
                ))}
              </tr>
              {open ? (
                <tr className="message-table__details-row">
                  <td colSpan={columnCount}>
                    <MessageDetails message={row.original} />
                  </td>
                </tr>
              ) : null}
            </tbody>
          );
        })}
        {paddingBottom > 0 ? (
          <tbody aria-hidden="true">
            <tr>
              <td colSpan={columnCount} style={{ height: paddingBottom, padding: 0 }} />
            </tr>
          </tbody>
        ) : null}
      </table>
    </div>
  );
}
