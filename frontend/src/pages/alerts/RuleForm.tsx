import { useEffect, useState, type FormEvent } from "react";

import { useClusters } from "../../api/hooks/clusters";
import type { Team } from "../../api/types";
import { Field, FormActions, FormError } from "../../components/Field";
import { formErrorsOf } from "../../lib/formErrors";
import { TeamSelect } from "./TeamSelect";
import { useAccess } from "../../api/hooks/access";
import { isOrgAdmin } from "../../auth/permissions";
import {
  useChannels,
  useRulePreview,
  useSaveAlertRule,
  type AlertRule,
  type AlertRuleCreate,
  type Health,
  type Metric,
  type RulePreviewInput,
} from "./api";
import { CLUSTER_METRIC_DEFAULTS, LAG_METRICS, METRIC_LABELS, isClusterMetric, isPerBrokerMetric } from "./labels";

const HEALTH: Health[] = ["LAGGING", "NO_COMMIT", "REWIND", "STALLED", "STOPPED", "DATA_LOSS"];
const FIELDS = [
  "team", "name", "cluster", "group_pattern", "topic_pattern", "granularity", "metric", "comparison", "threshold",
  "resolve_threshold", "statuses", "for_seconds", "severity", "channels", "renotify_interval_seconds",
] as const; // prettier-ignore
const RISING = new Set(["gt", "gte"]);
const PREVIEW_PAUSE_MS = 400;

interface RuleFormProps {
  teams: Team[];
  rule?: AlertRule;
  onDone: () => void;
}

type Values = Omit<
  AlertRuleCreate,
  "team" | "threshold" | "resolve_threshold" | "for_seconds" | "renotify_interval_seconds"
> & {
  team: number | "";
  threshold: string;
  resolve_threshold: string;
  for_seconds: string;
  renotify_interval_seconds: string;
};

function initialValues(teams: Team[], rule?: AlertRule): Values {
  const text = (value: number | null | undefined) => (value === null || value === undefined ? "" : String(value));
  return {
    team: rule?.team ?? teams[0]?.id ?? "",
    name: rule?.name ?? "",
    description: rule?.description ?? "",
    cluster: rule?.cluster ?? null,
    group_pattern: rule?.group_pattern ?? "*",
    all_teams: rule?.all_teams ?? false,
    topic_pattern: rule?.topic_pattern ?? "*",
    granularity: rule?.granularity ?? "group",
    metric: rule?.metric ?? "lag_seconds",
    comparison: rule?.comparison ?? "gt",
    threshold: text(rule?.threshold ?? (rule ? null : 30)),
    resolve_threshold: text(rule?.resolve_threshold),
    statuses: rule?.statuses ?? [],
    for_seconds: text(rule?.for_seconds ?? 60),
    severity: rule?.severity ?? "warning",
    channels: rule?.channels ?? [],
    renotify_interval_seconds: text(rule?.renotify_interval_seconds),
    send_resolved: rule?.send_resolved ?? true,
    enabled: rule?.enabled ?? true,
  };
}

/** The same checks the API makes, so most mistakes are named before anything is sent. */
export function ruleProblems(values: Values): Record<string, string> {
  const problems: Record<string, string> = {};
  const number = (text: string) => (text.trim() === "" ? null : Number(text));
  if (!values.name.trim()) problems.name = "Give the rule a name.";
  if (!values.group_pattern?.trim())
    problems.group_pattern = isPerBrokerMetric(values.metric) ? "Use * for every broker." : "Use * for every group.";
  if (values.metric === "status") {
    if (!values.statuses?.length) problems.statuses = "Name at least one status that fires.";
  } else {
    const threshold = number(values.threshold);
    const resolve = number(values.resolve_threshold);
    if (threshold === null || Number.isNaN(threshold) || threshold < 0) {
      problems.threshold = "A threshold of 0 or more is required for this metric.";
    } else if (resolve !== null) {
      if (Number.isNaN(resolve) || resolve < 0) problems.resolve_threshold = "Use a number of 0 or more.";
      else if (RISING.has(values.comparison ?? "gt") ? resolve > threshold : resolve < threshold)
        problems.resolve_threshold = RISING.has(values.comparison ?? "gt")
          ? "The resolve threshold must not be above the threshold."
          : "The resolve threshold must not be below the threshold.";
    }
  }
  const forSeconds = number(values.for_seconds);
  if (forSeconds === null || !Number.isInteger(forSeconds) || forSeconds < 0)
    problems.for_seconds = "Whole seconds, 0 or more.";
  const renotify = number(values.renotify_interval_seconds);
  if (renotify !== null && (!Number.isInteger(renotify) || renotify < 60))
    problems.renotify_interval_seconds = "At least 60 seconds, or empty to notify once.";
  return problems;
}

function bodyOf(values: Values): AlertRuleCreate {
  const number = (text: string) => (text.trim() === "" ? null : Number(text));
  const isStatus = values.metric === "status";
  return {
    ...values,
    team: Number(values.team),
    threshold: isStatus ? null : number(values.threshold),
    resolve_threshold: isStatus ? null : number(values.resolve_threshold),
    statuses: isStatus ? values.statuses : [],
    for_seconds: Number(values.for_seconds),
    renotify_interval_seconds: number(values.renotify_interval_seconds),
  };
}

/** Creates a rule, or edits one (its team stays). */
export function RuleForm({ teams, rule, onDone }: RuleFormProps) {
  const [values, setValues] = useState<Values>(() => initialValues(teams, rule));
  const [problems, setProblems] = useState<Record<string, string>>({});
  const save = useSaveAlertRule();
  const clusters = useClusters();
  const channels = useChannels();
  const server = formErrorsOf(save.error, FIELDS);
  const errorOf = (name: (typeof FIELDS)[number]) => problems[name] ?? server.fields[name];
  const set = <Key extends keyof Values>(name: Key, value: Values[Key]) => setValues({ ...values, [name]: value });
  const teamChannels = (channels.data ?? []).filter((channel) => channel.team === values.team);
  const clusterMetric = isClusterMetric(values.metric);
  const access = useAccess();
  const team = teams.find((each) => each.id === values.team);
  const orgAdmin = Boolean(access.data && team && isOrgAdmin(access.data, team.organization));

  function chooseMetric(metric: Metric) {
    // A cluster-health metric starts from its default threshold; lag metrics keep what was typed.
    const fallback = CLUSTER_METRIC_DEFAULTS[metric];
    const threshold = fallback === undefined ? values.threshold : String(fallback);
    setValues({ ...values, metric, threshold, group_pattern: isClusterMetric(metric) ? "*" : values.group_pattern });
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    const found = ruleProblems(values);
    setProblems(found);
    if (Object.keys(found).length > 0) return;
    const { team, ...changes } = bodyOf(values);
    const change = rule ? { id: rule.id, body: changes } : { id: null, body: { team, ...changes } };
    save.mutate(change, { onSuccess: onDone });
  }

  const input = (name: "name" | "group_pattern" | "topic_pattern", label: string, hint?: string) => (
    <Field label={label} hint={hint} error={errorOf(name)}>
      {(control) => (
        <input
          {...control}
          className="input mono"
          value={values[name] ?? ""}
          onChange={(event) => set(name, event.target.value)}
        />
      )}
    </Field>
  );
  const numberInput = (
    name: "threshold" | "resolve_threshold" | "for_seconds" | "renotify_interval_seconds",
    label: string,
    hint?: string,
  ) => (
    <Field label={label} hint={hint} error={errorOf(name)}>
      {(control) => (
        <input
          {...control}
          className="input"
          inputMode="decimal"
          value={values[name]}
          onChange={(event) => set(name, event.target.value)}
        />
      )}
    </Field>
  );

  return (
    <form onSubmit={submit} noValidate>
      {rule ? null : (
        <TeamSelect
          teams={teams}
          value={values.team}
          onChange={(team) => setValues({ ...values, team, channels: [] })}
          error={errorOf("team")}
        />
      )}
      {input("name", "Name")}
      <Field label="Cluster" error={errorOf("cluster")}>
        {(control) => (
          <select
            {...control}
            className="input"
            value={values.cluster ?? ""}
            onChange={(event) => set("cluster", event.target.value ? Number(event.target.value) : null)}
          >
            <option value="">Every cluster</option>
            {(clusters.data ?? []).map((cluster) => (
              <option key={cluster.id} value={cluster.id}>
                {cluster.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Metric" error={errorOf("metric")}>
        {(control) => (
          <select
            {...control}
            className="input"
            value={values.metric}
            onChange={(event) => chooseMetric(event.target.value as Metric)}
          >
            <optgroup label="Consumer lag">
              {LAG_METRICS.map((metric) => (
                <option key={metric} value={metric}>
                  {METRIC_LABELS[metric]}
                </option>
              ))}
            </optgroup>
            <optgroup label="Cluster health">
              {(Object.keys(CLUSTER_METRIC_DEFAULTS) as Metric[]).map((metric) => (
                <option key={metric} value={metric}>
                  {METRIC_LABELS[metric]}
                </option>
              ))}
            </optgroup>
          </select>
        )}
      </Field>
      {!clusterMetric && (orgAdmin || values.all_teams) ? (
        <label className="radio">
          <input
            type="checkbox"
            checked={values.all_teams ?? false}
            disabled={!orgAdmin}
            onChange={(event) => set("all_teams", event.target.checked)}
          />{" "}
          Every team&apos;s groups (org admins)
        </label>
      ) : null}
      {clusterMetric ? (
        isPerBrokerMetric(values.metric) ? (
          input("group_pattern", "Brokers", "A pattern on `broker <id>`: * for every broker.")
        ) : null
      ) : (
        <>
          {input(
            "group_pattern",
            "Consumer groups",
            "A pattern on the group name: * matches any run of characters, ? one.",
          )}
          {input("topic_pattern", "Topics", "Only partitions of matching topics count.")}
          <Field label="One alert per" error={errorOf("granularity")}>
            {(control) => (
              <select
                {...control}
                className="input"
                value={values.granularity}
                onChange={(event) => set("granularity", event.target.value as Values["granularity"])}
              >
                <option value="group">Group</option>
                <option value="partition">Partition</option>
              </select>
            )}
          </Field>
        </>
      )}
      {values.metric === "status" ? (
        <fieldset className="field">
          <legend className="field__label">Fires on</legend>
          {HEALTH.map((status) => (
            <label key={status} className="radio">
              <input
                type="checkbox"
                checked={values.statuses?.includes(status) ?? false}
                onChange={(event) =>
                  set(
                    "statuses",
                    event.target.checked
                      ? [...(values.statuses ?? []), status]
                      : (values.statuses ?? []).filter((each) => each !== status),
                  )
                }
              />{" "}
              {status}
            </label>
          ))}
          {errorOf("statuses") ? <p className="field__error">{errorOf("statuses")}</p> : null}
        </fieldset>
      ) : (
        <>
          <Field label="Comparison" error={errorOf("comparison")}>
            {(control) => (
              <select
                {...control}
                className="input"
                value={values.comparison}
                onChange={(event) => set("comparison", event.target.value as Values["comparison"])}
              >
                <option value="gt">above (&gt;)</option>
                <option value="gte">at or above (≥)</option>
                <option value="lt">below (&lt;)</option>
                <option value="lte">at or below (≤)</option>
              </select>
            )}
          </Field>
          {numberInput("threshold", "Threshold")}
          {numberInput(
            "resolve_threshold",
            "Resolve threshold",
            "A firing alert resolves only once the value is back past this. Empty: the threshold.",
          )}
        </>
      )}
      {clusterMetric ? null : <MatchesNow values={values} />}
      {numberInput("for_seconds", "For (seconds)", "How long the condition must hold before the alert fires.")}
      <Field label="Severity" error={errorOf("severity")}>
        {(control) => (
          <select
            {...control}
            className="input"
            value={values.severity}
            onChange={(event) => set("severity", event.target.value as Values["severity"])}
          >
            <option value="info">Info</option>
            <option value="warning">Warning</option>
            <option value="critical">Critical</option>
          </select>
        )}
      </Field>
      <fieldset className="field">
        <legend className="field__label">Channels</legend>
        {teamChannels.length === 0 ? <p className="muted">The team has no channels yet.</p> : null}
        {teamChannels.map((channel) => (
          <label key={channel.id} className="radio">
            <input
              type="checkbox"
              checked={values.channels?.includes(channel.id) ?? false}
              onChange={(event) =>
                set(
                  "channels",
                  event.target.checked
                    ? [...(values.channels ?? []), channel.id]
                    : (values.channels ?? []).filter((each) => each !== channel.id),
                )
              }
            />{" "}
            {channel.name} ({channel.kind})
          </label>
        ))}
        {errorOf("channels") ? <p className="field__error">{errorOf("channels")}</p> : null}
      </fieldset>
      {numberInput("renotify_interval_seconds", "Re-notify every (seconds)", "Empty: notify once while firing.")}
      <label className="radio">
        <input
          type="checkbox"
          checked={values.send_resolved}
          onChange={(event) => set("send_resolved", event.target.checked)}
        />{" "}
        Send a notice when it resolves
      </label>
      <label className="radio">
        <input type="checkbox" checked={values.enabled} onChange={(event) => set("enabled", event.target.checked)} />{" "}
        Enabled
      </label>
      <FormError message={server.form} />
      <FormActions submitLabel={rule ? "Save" : "Create rule"} pending={save.isPending} onCancel={onDone} />
    </form>
  );
}

/** What the rule as typed would watch now; asked again a moment after typing stops. */
function MatchesNow({ values }: { values: Values }) {
  const [input, setInput] = useState<RulePreviewInput | null>(null);
  useEffect(() => {
    if (values.team === "") return;
    const threshold = values.threshold.trim() === "" ? null : Number(values.threshold);
    const next: RulePreviewInput = {
      team: Number(values.team),
      cluster: values.cluster ?? null,
      group_pattern: values.group_pattern || "*",
      topic_pattern: values.topic_pattern || "*",
      all_teams: values.all_teams ?? false,
      granularity: values.granularity,
      metric: values.metric,
      comparison: values.comparison,
      threshold: values.metric === "status" || Number.isNaN(threshold) ? null : threshold,
      statuses: values.metric === "status" ? values.statuses : [],
    };
    const timer = window.setTimeout(() => setInput(next), PREVIEW_PAUSE_MS);
    return () => window.clearTimeout(timer);
  }, [
    values.team, values.cluster, values.group_pattern, values.topic_pattern, values.all_teams, values.granularity,
    values.metric, values.comparison, values.threshold, values.statuses,
  ]); // prettier-ignore
  const preview = useRulePreview(input);
  let text: string;
  if (preview.isError) text = "Could not preview the matching groups.";
  else if (!preview.data) text = "Looking for matching groups…";
  else if (preview.data.count === 0) text = "No consumer group matches now.";
  else {
    const firing = preview.data.groups.filter((group) => group.breaches_now).length;
    const names = preview.data.groups.slice(0, 5).map((group) => group.group);
    const more = preview.data.count > names.length ? `, and ${preview.data.count - names.length} more` : "";
    text = `Matches ${preview.data.count} group${preview.data.count === 1 ? "" : "s"} now (${firing} breaching): ${names.join(", ")}${more}.`;
  }
  return (
    <p className="muted" role="status" aria-label="Matching groups">
      {text}
    </p>
  );
}
