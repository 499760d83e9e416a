import { isFinished, useOperation } from "../../api/hooks/clusters";
import type { Operation } from "../../api/types";
import { ProgressBar } from "../../components/ProgressBar";
import { Timestamp } from "../../components/Timestamp";
import { ErrorState, LoadingState } from "../../components/states";

interface LogLine {
  at: string;
  message: string;
}

function logOf(operation: Operation): LogLine[] {
  if (!Array.isArray(operation.log)) return [];
  return operation.log.filter(
    (line): line is LogLine =>
      typeof line === "object" && line !== null && typeof line.at === "string" && typeof line.message === "string",
  );
}

function stepsOf(operation: Operation): string[] {
  return Array.isArray(operation.steps) ? operation.steps.filter((step) => typeof step === "string") : [];
}

const KIND_LABEL: Record<Operation["kind"], string> = {
  provision: "Provisioning",
  delete: "Deleting",
  restart_broker: "Restarting a broker",
  add_broker: "Adding a broker",
  remove_broker: "Removing a broker",
  replace_controller: "Replacing a controller",
  change_broker_config: "Changing the broker configs of",
  topic_create: "Creating topic",
  topic_delete: "Deleting topic",
  topic_partitions: "Adding partitions to",
  topic_configs: "Changing configs of",
};

/** "step 3 of 5: start brokers", or the end state once the operation finished. */
export function progressLabel(operation: Operation): string {
  const state = operation.state ?? "pending";
  if (state === "succeeded") return `Done: all ${operation.step_count} steps finished`;
  if (state === "pending") return "Waiting for a worker to start it";
  const step = `step ${operation.step} of ${operation.step_count}${operation.step_name ? `: ${operation.step_name}` : ""}`;
  return state === "failed" ? `Failed at ${step}` : step.charAt(0).toUpperCase() + step.slice(1);
}

/** A finished step counts whole; the running step counts half so the bar moves when it starts. */
function percentDone(operation: Operation): number {
  if (operation.state === "succeeded") return 100;
  if (operation.step_count === 0) return 0;
  const done = Math.max(operation.step - 1, 0) + (operation.state === "running" ? 0.5 : 0);
  return Math.round((done / operation.step_count) * 100);
}

/** An operation's progress bar, its timestamped log, and its error if it failed. */
export function OperationProgress({ operation }: { operation: Operation }) {
  const state = operation.state ?? "pending";
  const label = progressLabel(operation);
  const log = logOf(operation);
  const steps = stepsOf(operation);
  // A team's change names what it changes (a topic); the cluster's own operations name the cluster.
  const subject = operation.resource_name ? operation.resource_name : operation.cluster_name;
  return (
    <div
      className={`operation operation--${state}`}
      aria-label={`${KIND_LABEL[operation.kind]} ${subject}`}
      role="group"
    >
      <div className="operation__header">
        <strong>{KIND_LABEL[operation.kind]}</strong> <span className="mono">{subject}</span>{" "}
        <span
          className={
            state === "failed" ? "badge badge--danger" : state === "succeeded" ? "badge badge--ok" : "badge badge--info"
          }
        >
          {state}
        </span>
      </div>
      <ProgressBar percent={percentDone(operation)} label={label} valueText={label} />
      <p className="operation__step">{label}</p>
      {steps.length > 0 ? (
        <ol className="operation__steps" aria-label="Steps">
          {steps.map((step, index) => {
            const position = index + 1;
            const status =
              state === "succeeded" || position < operation.step
                ? "done"
                : position === operation.step
                  ? state
                  : "waiting";
            return (
              <li key={step} className={`operation__step-item operation__step-item--${status}`}>
                {position}. {step}
              </li>
            );
          })}
        </ol>
      ) : null}
      {operation.error ? (
        <p className="form-error" role="alert">
          {operation.error}
        </p>
      ) : null}
      {log.length > 0 ? (
        <ul className="operation__log" aria-label="Log">
          {log.map((line, index) => (
            <li key={`${line.at}-${index}`}>
              <span className="muted">
                <Timestamp value={line.at} />
              </span>{" "}
              <span className="mono">{line.message}</span>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** Follows an operation live: polls it every second until it succeeds or fails. */
export function LiveOperation({ id }: { id: number }) {
  const operation = useOperation(id);
  if (operation.isPending) return <LoadingState label="Loading the operation…" />;
  if (operation.isError) {
    return (
      <ErrorState
        error={operation.error}
        title="Could not load the operation's progress"
        onRetry={() => void operation.refetch()}
      />
    );
  }
  return (
    <div aria-live="polite" aria-busy={!isFinished(operation.data)}>
      <OperationProgress operation={operation.data} />
    </div>
  );
}
