import { createColumnHelper } from "@tanstack/react-table";
import { useState, type FormEvent } from "react";

import type { Team } from "../../api/types";
import { DataTable } from "../../components/DataTable";
import { Dialog } from "../../components/Dialog";
import { Field, FormActions, FormError } from "../../components/Field";
import { Timestamp } from "../../components/Timestamp";
import { EmptyState, QueryView } from "../../components/states";
import { formErrorsOf } from "../../lib/formErrors";
import { NewButton } from "./NewButton";
import { TeamSelect } from "./TeamSelect";
import { useManageableTeams } from "./access";
import { useAlertRules, useCreateSilence, useExpireSilence, useSilences, type Silence } from "./api";

const column = createColumnHelper<Silence>();
const HOUR_MS = 3_600_000;

function matchers(silence: Silence): string {
  const parts = [`group ${silence.group_pattern}`];
  if (silence.topic_pattern !== "*") parts.push(`topic ${silence.topic_pattern}`);
  if (silence.rule_name) parts.push(`rule ${silence.rule_name}`);
  if (silence.severity) parts.push(`severity ${silence.severity}`);
  if (silence.cluster_name) parts.push(`cluster ${silence.cluster_name}`);
  return parts.join(", ");
}

/** Silences mute matching alerts' notifications for a while; the alerts themselves keep firing. */
export function SilencesTab() {
  const silences = useSilences();
  const teams = useManageableTeams();
  const editable = new Set(teams.map((team) => team.id));
  const expire = useExpireSilence();
  const [creating, setCreating] = useState(false);

  const columns = [
    column.accessor("state", {
      header: "State",
      cell: (info) => (
        <span className={info.getValue() === "active" ? "badge badge--warning" : "badge"}>{info.getValue()}</span>
      ),
    }),
    column.accessor((silence) => matchers(silence), { id: "matchers", header: "Matches" }),
    column.accessor("team_name", { header: "Team" }),
    column.accessor("starts_at", { header: "Starts", cell: (info) => <Timestamp value={info.getValue()} /> }),
    column.accessor("ends_at", { header: "Ends", cell: (info) => <Timestamp value={info.getValue()} /> }),
    column.accessor("comment", { header: "Comment" }),
    column.accessor("created_by_name", { header: "By" }),
    column.display({
      id: "actions",
      header: "",
      cell: ({ row: { original: silence } }) =>
        silence.state !== "expired" && editable.has(silence.team) ? (
          <button
            type="button"
            className="button"
            disabled={expire.isPending}
            onClick={() => expire.mutate(silence.id)}
          >
            Expire
          </button>
        ) : null,
    }),
  ];

  return (
    <>
      <NewButton visible={teams.length > 0} label="New silence" onClick={() => setCreating(true)} />
      <FormError message={formErrorsOf(expire.error, []).form} />
      <QueryView
        query={silences}
        errorTitle="Could not load the silences"
        isEmpty={(list) => list.length === 0}
        empty={<EmptyState title="No silences" description="Silence alerts during planned work." />}
      >
        {(list) => (
          <DataTable label="Silences" columns={columns} rows={list} getRowId={(silence) => String(silence.id)} />
        )}
      </QueryView>
      <Dialog open={creating} title="New silence" onClose={() => setCreating(false)}>
        <SilenceForm teams={teams} onDone={() => setCreating(false)} />
      </Dialog>
    </>
  );
}

const SILENCE_FIELDS = ["team", "rule", "group_pattern", "topic_pattern", "severity", "ends_at", "comment"];

function SilenceForm({ teams, onDone }: { teams: Team[]; onDone: () => void }) {
  const create = useCreateSilence();
  const rules = useAlertRules();
  const [team, setTeam] = useState<number | "">(teams[0]?.id ?? "");
  const [rule, setRule] = useState<number | "">("");
  const [groupPattern, setGroupPattern] = useState("*");
  const [topicPattern, setTopicPattern] = useState("*");
  const [hours, setHours] = useState("2");
  const [comment, setComment] = useState("");
  const [problems, setProblems] = useState<Record<string, string>>({});
  const server = formErrorsOf(create.error, SILENCE_FIELDS);

  function submit(event: FormEvent) {
    event.preventDefault();
    const duration = Number(hours);
    const found: Record<string, string> = {};
    if (!(duration > 0 && duration <= 24 * 90)) found.ends_at = "From a few minutes up to 90 days (2160 hours).";
    if (!comment.trim()) found.comment = "Say why, so others know.";
    setProblems(found);
    if (Object.keys(found).length > 0 || team === "") return;
    create.mutate(
      {
        team,
        rule: rule === "" ? null : rule,
        group_pattern: groupPattern,
        topic_pattern: topicPattern,
        ends_at: new Date(Date.now() + duration * HOUR_MS).toISOString(),
        comment,
      },
      { onSuccess: onDone },
    );
  }

  const errorOf = (name: string) => problems[name] ?? server.fields[name];
  return (
    <form onSubmit={submit} noValidate>
      <TeamSelect teams={teams} value={team} onChange={setTeam} error={errorOf("team")} />
      <Field label="Rule" error={errorOf("rule")}>
        {(control) => (
          <select
            {...control}
            className="input"
            value={rule}
            onChange={(event) => setRule(event.target.value ? Number(event.target.value) : "")}
          >
            <option value="">Any rule of the team</option>
            {(rules.data ?? [])
              .filter((each) => each.team === team)
              .map((each) => (
                <option key={each.id} value={each.id}>
                  {each.name}
                </option>
              ))}
          </select>
        )}
      </Field>
      <Field
        label="Consumer groups"
        hint="A pattern: * matches any run of characters."
        error={errorOf("group_pattern")}
      >
        {(control) => (
          <input
            {...control}
            className="input mono"
            value={groupPattern}
            onChange={(e) => setGroupPattern(e.target.value)}
          />
        )}
      </Field>
      <Field label="Topics" error={errorOf("topic_pattern")}>
        {(control) => (
          <input
            {...control}
            className="input mono"
            value={topicPattern}
            onChange={(e) => setTopicPattern(e.target.value)}
          />
        )}
      </Field>
      <Field label="Duration (hours)" error={errorOf("ends_at")}>
        {(control) => (
          <input
            {...control}
            className="input"
            inputMode="decimal"
            value={hours}
            onChange={(e) => setHours(e.target.value)}
          />
        )}
      </Field>
      <Field label="Comment" error={errorOf("comment")}>
        {(control) => (
          <textarea
            {...control}
            className="input"
            rows={2}
            value={comment}
            onChange={(e) => setComment(e.target.value)}
          />
        )}
      </Field>
      <FormError message={server.form} />
      <FormActions submitLabel="Silence" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}
