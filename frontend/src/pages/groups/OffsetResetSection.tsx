import { createColumnHelper } from "@tanstack/react-table";
import { useState, type FormEvent } from "react";

import { describeError } from "../../api/errors";
import {
  INACTIVE_GROUP_STATES,
  useApplyReset,
  useOffsetResets,
  usePreviewReset,
  useUndoReset,
  type ConsumerGroupDetail,
  type OffsetReset,
  type OffsetResetInput,
  type PlannedOffset,
  type ResetStrategy,
} from "../../api/hooks/groups";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { DataTable } from "../../components/DataTable";
import { Field, FormError } from "../../components/Field";
import { Timestamp } from "../../components/Timestamp";
import { QueryView } from "../../components/states";
import { formErrorsOf } from "../../lib/formErrors";
import { fromDateTimeLocal } from "../../lib/time";

const NUMBER = new Intl.NumberFormat();

export const STRATEGY_LABELS: Record<ResetStrategy, string> = {
  earliest: "Earliest offset",
  latest: "Latest offset (skip the backlog)",
  timestamp: "First offset at or after a time",
  offset: "Exact offsets per partition",
  shift: "Shift by N messages",
};

interface Draft {
  strategy: ResetStrategy;
  topics: string[];
  timestamp: string;
  shiftBy: string;
  /** "topic:partition" → offset typed for the exact-offset strategy. */
  exact: Record<string, string>;
}

/** The request the form describes, or a message saying what is missing. */
export function resetInputOf(draft: Draft): OffsetResetInput | string {
  const body: OffsetResetInput = { strategy: draft.strategy, topics: draft.topics, shift_by: 0 };
  if (draft.strategy === "timestamp") {
    const timestamp = fromDateTimeLocal(draft.timestamp);
    if (!timestamp) return "Pick the time to reset to.";
    body.timestamp = timestamp;
  }
  if (draft.strategy === "shift") {
    const shift = Number(draft.shiftBy);
    if (!Number.isInteger(shift) || shift === 0) return "Shift by a whole number of messages, e.g. -100 or 50.";
    body.shift_by = shift;
  }
  if (draft.strategy === "offset") {
    const offsets = [];
    for (const [key, text] of Object.entries(draft.exact)) {
      if (text.trim() === "") continue;
      const offset = Number(text);
      const cut = key.lastIndexOf(":");
      if (!Number.isInteger(offset) || offset < 0) return `The offset for ${key} must be a whole number ≥ 0.`;
      offsets.push({ topic: key.slice(0, cut), partition: Number(key.slice(cut + 1)), offset });
    }
    if (offsets.length === 0) return "Type the new offset of at least one partition.";
    body.offsets = offsets;
  }
  return body;
}

/**
 * Offset reset in three steps: describe it, preview old → new offsets and the lag each leaves,
 * then apply with a typed confirmation. The latest applied reset can be undone.
 */
export function OffsetResetSection({ group, canReset }: { group: ConsumerGroupDetail; canReset: boolean }) {
  return (
    <section className="section" aria-labelledby="group-reset">
      <h2 id="group-reset" className="section__title">
        Reset offsets
      </h2>
      {canReset ? (
        <ResetWorkflow group={group} />
      ) : (
        <p className="muted">Developers of the group&apos;s team can reset its offsets; you can view them.</p>
      )}
      <ResetHistory group={group} canReset={canReset} />
    </section>
  );
}

function ResetWorkflow({ group }: { group: ConsumerGroupDetail }) {
  const topics = [...new Set(group.live.offsets.map((offset) => offset.topic))].sort();
  const [draft, setDraft] = useState<Draft>({
    strategy: "earliest",
    topics: [],
    timestamp: "",
    shiftBy: "",
    exact: {},
  });
  const [problem, setProblem] = useState<string | null>(null);
  const [previewed, setPreviewed] = useState<OffsetResetInput | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [applied, setApplied] = useState<OffsetReset | null>(null);
  const preview = usePreviewReset(group.id);
  const apply = useApplyReset(group.id);
  const active = !INACTIVE_GROUP_STATES.has(group.live.state) || group.live.members.length > 0;

  function change(update: Partial<Draft>) {
    setDraft((current) => ({ ...current, ...update }));
    // A changed form invalidates the preview: apply must commit exactly what was shown.
    setPreviewed(null);
    preview.reset();
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    const body = resetInputOf(draft);
    if (typeof body === "string") {
      setProblem(body);
      return;
    }
    setProblem(null);
    setApplied(null);
    preview.mutate(body, { onSuccess: () => setPreviewed(body) });
  }

  const errors = formErrorsOf(preview.error, ["strategy", "topics", "timestamp", "shift_by", "offsets"]);

  return (
    <>
      <form className="reset-form" onSubmit={submit} aria-label="Describe the offset reset">
        <Field label="Strategy" error={errors.fields.strategy}>
          {(control) => (
            <select
              {...control}
              className="input"
              value={draft.strategy}
              onChange={(event) => change({ strategy: event.target.value as ResetStrategy })}
            >
              {Object.entries(STRATEGY_LABELS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
        {draft.strategy === "timestamp" ? (
          <Field label="Time" hint="In your timezone." error={errors.fields.timestamp}>
            {(control) => (
              <input
                {...control}
                className="input"
                type="datetime-local"
                step={1}
                value={draft.timestamp}
                onChange={(event) => change({ timestamp: event.target.value })}
              />
            )}
          </Field>
        ) : null}
        {draft.strategy === "shift" ? (
          <Field label="Shift by" hint="Negative re-reads, positive skips." error={errors.fields.shift_by}>
            {(control) => (
              <input
                {...control}
                className="input"
                type="number"
                step={1}
                value={draft.shiftBy}
                onChange={(event) => change({ shiftBy: event.target.value })}
              />
            )}
          </Field>
        ) : null}
        {topics.length > 0 && draft.strategy !== "offset" ? (
          <fieldset className="reset-form__topics">
            <legend className="field__label">Topics (none ticked: every topic the group has offsets on)</legend>
            {topics.map((topic) => (
              <label key={topic} className="checkbox">
                <input
                  type="checkbox"
                  checked={draft.topics.includes(topic)}
                  onChange={(event) =>
                    change({
                      topics: event.target.checked
                        ? [...draft.topics, topic]
                        : draft.topics.filter((chosen) => chosen !== topic),
                    })
                  }
                />{" "}
                <span className="mono">{topic}</span>
              </label>
            ))}
          </fieldset>
        ) : null}
        {draft.strategy === "offset" ? (
          <ExactOffsets group={group} values={draft.exact} onChange={(exact) => change({ exact })} />
        ) : null}
        <FormError message={problem ?? errors.form} />
        <div className="actions">
          <button type="submit" className="button" disabled={preview.isPending}>
            {preview.isPending ? "Previewing…" : "Preview reset"}
          </button>
        </div>
      </form>

      {applied ? (
        <p className="callout" role="status">
          Reset applied to {applied.offsets.length} {applied.offsets.length === 1 ? "partition" : "partitions"}. You can
          undo it below.
        </p>
      ) : null}

      {previewed && preview.data ? (
        <div className="reset-preview">
          <h3 className="section__title">Preview</h3>
          <PreviewTable planned={preview.data} group={group} />
          {active ? (
            <p className="callout callout--warning">
              The group has active members. Kafka accepts new offsets only while a group is empty: stop its consumers,
              then apply.
            </p>
          ) : null}
          <div className="actions">
            <button
              type="button"
              className="button button--danger"
              disabled={active || preview.data.length === 0}
              onClick={() => setConfirming(true)}
            >
              Apply reset
            </button>
          </div>
        </div>
      ) : null}

      <ConfirmDialog
        open={confirming && previewed !== null}
        title={`Reset offsets of ${group.name}`}
        description={`The group's committed offsets on ${preview.data?.length ?? 0} partitions change as previewed. The old offsets are kept, so this reset can be undone.`}
        confirmationText={group.name}
        confirmLabel="Apply reset"
        pending={apply.isPending}
        error={apply.isError ? describeError(apply.error) : null}
        onCancel={() => {
          setConfirming(false);
          apply.reset();
        }}
        onConfirm={() => {
          if (previewed === null) return;
          apply.mutate(previewed, {
            onSuccess: (reset) => {
              setConfirming(false);
              setApplied(reset);
              setPreviewed(null);
              preview.reset();
            },
          });
        }}
      />
    </>
  );
}

function ExactOffsets({
  group,
  values,
  onChange,
}: {
  group: ConsumerGroupDetail;
  values: Record<string, string>;
  onChange: (values: Record<string, string>) => void;
}) {
  if (group.live.offsets.length === 0) {
    return <p className="muted">The group has no committed offsets; use another strategy and name its topics.</p>;
  }
  return (
    <fieldset className="reset-form__offsets">
      <legend className="field__label">New offsets (leave a partition empty to keep it)</legend>
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Partition</th>
            <th scope="col">Committed</th>
            <th scope="col">Log end</th>
            <th scope="col">New offset</th>
          </tr>
        </thead>
        <tbody>
          {group.live.offsets.map((offset) => {
            const key = `${offset.topic}:${offset.partition}`;
            return (
              <tr key={key}>
                <td className="mono">
                  {offset.topic}-{offset.partition}
                </td>
                <td>{NUMBER.format(offset.committed_offset)}</td>
                <td>{NUMBER.format(offset.log_end_offset)}</td>
                <td>
                  <input
                    className="input"
                    type="number"
                    min={0}
                    aria-label={`New offset for ${offset.topic} partition ${offset.partition}`}
                    value={values[key] ?? ""}
                    onChange={(event) => onChange({ ...values, [key]: event.target.value })}
                  />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </fieldset>
  );
}

interface PreviewRow extends PlannedOffset {
  lagBefore: number | null;
  lagAfter: number | null;
}

const previewColumn = createColumnHelper<PreviewRow>();
const formatOffset = (value: number | null) => (value == null ? "none" : NUMBER.format(value));
const previewColumns = [
  previewColumn.accessor("topic", { header: "Topic", cell: (info) => <span className="mono">{info.getValue()}</span> }),
  previewColumn.accessor("partition", { header: "Partition" }),
  previewColumn.accessor("old_offset", { header: "Old offset", cell: (info) => formatOffset(info.getValue()) }),
  previewColumn.accessor("new_offset", { header: "New offset", cell: (info) => formatOffset(info.getValue()) }),
  previewColumn.accessor("lagBefore", { header: "Lag now", cell: (info) => formatOffset(info.getValue()) }),
  previewColumn.accessor("lagAfter", {
    header: "Lag after",
    cell: (info) => {
      const { lagBefore, lagAfter } = info.row.original;
      if (lagAfter == null) return "—";
      const delta = lagBefore == null ? null : lagAfter - lagBefore;
      return (
        <>
          {NUMBER.format(lagAfter)}
          {delta ? (
            <span className="muted">
              {" "}
              ({delta > 0 ? "+" : "−"}
              {NUMBER.format(Math.abs(delta))})
            </span>
          ) : null}
        </>
      );
    },
  }),
];

/** Lag before and after from the log-end offsets the group's detail read from the cluster. */
export function previewRows(planned: PlannedOffset[], group: ConsumerGroupDetail): PreviewRow[] {
  const logEnd = new Map(
    group.live.offsets.map((offset) => [`${offset.topic}:${offset.partition}`, offset.log_end_offset]),
  );
  return planned.map((row) => {
    const end = logEnd.get(`${row.topic}:${row.partition}`);
    return {
      ...row,
      lagBefore: end === undefined ? null : Math.max(end - (row.old_offset ?? 0), 0),
      lagAfter: end === undefined ? null : Math.max(end - row.new_offset, 0),
    };
  });
}

function PreviewTable({ planned, group }: { planned: PlannedOffset[]; group: ConsumerGroupDetail }) {
  return (
    <DataTable
      label="Reset preview"
      columns={previewColumns}
      rows={previewRows(planned, group)}
      getRowId={(row) => `${row.topic}:${row.partition}`}
      filterable={planned.length > 10}
      emptyTitle="Nothing would change"
      emptyDescription="The chosen partitions are already at the target offsets."
    />
  );
}

const historyColumn = createColumnHelper<OffsetReset>();
const historyColumns = [
  historyColumn.accessor("applied_at", { header: "Applied", cell: (info) => <Timestamp value={info.getValue()} /> }),
  historyColumn.accessor("strategy", { header: "Strategy", cell: (info) => STRATEGY_LABELS[info.getValue()] }),
  historyColumn.accessor((reset) => reset.offsets.length, { id: "partitions", header: "Partitions" }),
  historyColumn.accessor((reset) => reset.requested_by || "—", { id: "by", header: "By" }),
  historyColumn.accessor((reset) => reset.undone_at ?? "", {
    id: "undone",
    header: "Undone",
    cell: (info) => (info.getValue() ? <Timestamp value={info.getValue()} /> : "—"),
  }),
];

function ResetHistory({ group, canReset }: { group: ConsumerGroupDetail; canReset: boolean }) {
  const resets = useOffsetResets(group.id);
  const undo = useUndoReset(group.id);
  const [confirming, setConfirming] = useState(false);
  const active = !INACTIVE_GROUP_STATES.has(group.live.state) || group.live.members.length > 0;
  return (
    <QueryView query={resets} errorTitle="Could not load the reset history">
      {(history) => {
        const latest = history[0];
        const undoable = latest !== undefined && !latest.undone_at;
        return (
          <>
            <h3 className="section__title">Reset history</h3>
            {canReset && undoable ? (
              <div className="actions">
                <button type="button" className="button" disabled={active} onClick={() => setConfirming(true)}>
                  Undo last reset
                </button>
                {active ? <span className="muted">Stop the group&apos;s consumers to undo.</span> : null}
              </div>
            ) : null}
            {undo.isSuccess && !undo.isPending ? (
              <p className="callout" role="status">
                The last reset was undone; the group is back at the offsets it replaced.
              </p>
            ) : null}
            <DataTable
              label="Reset history"
              columns={historyColumns}
              rows={history}
              getRowId={(reset) => String(reset.id)}
              filterable={false}
              pagination={{ pageSize: 10 }}
              emptyTitle="No resets yet"
            />
            {latest ? (
              <ConfirmDialog
                open={confirming}
                title="Undo the last reset"
                description={`Restores the offsets the ${STRATEGY_LABELS[latest.strategy].toLowerCase()} reset replaced on ${latest.offsets.length} partitions.`}
                confirmationText={group.name}
                confirmLabel="Undo reset"
                pending={undo.isPending}
                error={undo.isError ? describeError(undo.error) : null}
                onCancel={() => {
                  setConfirming(false);
                  undo.reset();
                }}
                onConfirm={() => undo.mutate(undefined, { onSuccess: () => setConfirming(false) })}
              />
            ) : null}
          </>
        );
      }}
    </QueryView>
  );
}
