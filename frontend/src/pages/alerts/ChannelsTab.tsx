import { createColumnHelper } from "@tanstack/react-table";
import { useId, useState, type FormEvent } from "react";

import type { Team } from "../../api/types";
import { DataTable } from "../../components/DataTable";
import { Dialog } from "../../components/Dialog";
import { Field, FormActions, FormError } from "../../components/Field";
import { EmptyState, QueryView } from "../../components/states";
import { formErrorsOf } from "../../lib/formErrors";
import { NewButton } from "./NewButton";
import { TeamSelect } from "./TeamSelect";
import { useManageableTeams } from "./access";
import {
  useChannels,
  useCreateChannel,
  useNotification,
  useSendTestNotification,
  type Channel,
  type ChannelCreate,
  type ChannelWithSecret,
} from "./api";

const column = createColumnHelper<Channel>();
const KIND_LABELS: Record<string, string> = { webhook: "Webhook", slack: "Slack-compatible", email: "E-mail" };

/** Where alerts go. A webhook's signing secret is shown once, right after it is created. */
export function ChannelsTab() {
  const channels = useChannels();
  const teams = useManageableTeams();
  const editable = new Set(teams.map((team) => team.id));
  const [creating, setCreating] = useState(false);
  const [testing, setTesting] = useState<number | null>(null);
  const sendTest = useSendTestNotification();

  const columns = [
    column.accessor("name", { header: "Name" }),
    column.accessor("team_name", { header: "Team" }),
    column.accessor((channel) => KIND_LABELS[channel.kind] ?? channel.kind, { id: "kind", header: "Kind" }),
    column.accessor((channel) => (channel.kind === "email" ? channel.email_recipients.join(", ") : channel.url), {
      id: "destination",
      header: "Destination",
      cell: (info) => <span className="mono">{info.getValue()}</span>,
    }),
    column.accessor("signed", { header: "Signed", cell: (info) => (info.getValue() ? "HMAC-SHA256" : "—") }),
    column.display({
      id: "actions",
      header: "",
      cell: ({ row: { original: channel } }) =>
        editable.has(channel.team) ? (
          <button
            type="button"
            className="button"
            disabled={sendTest.isPending}
            onClick={() => sendTest.mutate(channel.id, { onSuccess: (notification) => setTesting(notification.id) })}
          >
            Send test
          </button>
        ) : null,
    }),
  ];

  return (
    <>
      <NewButton visible={teams.length > 0} label="New channel" onClick={() => setCreating(true)} />
      <FormError message={formErrorsOf(sendTest.error, []).form} />
      {testing !== null ? <TestResult notificationId={testing} /> : null}
      <QueryView
        query={channels}
        errorTitle="Could not load the channels"
        isEmpty={(list) => list.length === 0}
        empty={
          <EmptyState title="No channels yet" description="Add a webhook, a Slack webhook or e-mail recipients." />
        }
      >
        {(list) => (
          <DataTable label="Channels" columns={columns} rows={list} getRowId={(channel) => String(channel.id)} />
        )}
      </QueryView>
      <Dialog open={creating} title="New channel" onClose={() => setCreating(false)}>
        <ChannelForm teams={teams} onDone={() => setCreating(false)} />
      </Dialog>
    </>
  );
}

/** The test notification's delivery, followed until it is sent or has failed. */
function TestResult({ notificationId }: { notificationId: number }) {
  const notification = useNotification(notificationId);
  const data = notification.data;
  if (!data || data.status === "pending") {
    return (
      <p className="callout" role="status">
        Sending the test notification…
      </p>
    );
  }
  const last = data.attempts[data.attempts.length - 1];
  return data.status === "sent" ? (
    <p className="callout" role="status">
      Test notification delivered{last?.status_code ? ` (HTTP ${last.status_code})` : ""}.
    </p>
  ) : (
    <p className="callout callout--danger" role="status">
      Test notification failed: {data.last_error}
    </p>
  );
}

function ChannelForm({ teams, onDone }: { teams: Team[]; onDone: () => void }) {
  const create = useCreateChannel();
  const [team, setTeam] = useState<number | "">(teams[0]?.id ?? "");
  const [name, setName] = useState("");
  const [kind, setKind] = useState<ChannelCreate["kind"]>("webhook");
  const [url, setUrl] = useState("");
  const [recipients, setRecipients] = useState("");
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [created, setCreated] = useState<ChannelWithSecret | null>(null);
  const server = formErrorsOf(create.error, ["team", "name", "kind", "url", "email_recipients"]);
  const errorOf = (field: string) => problems[field] ?? server.fields[field];

  if (created !== null) return <CreatedChannel channel={created} onDone={onDone} />;

  function submit(event: FormEvent) {
    event.preventDefault();
    const emails = recipients
      .split(/[\s,;]+/)
      .map((each) => each.trim())
      .filter(Boolean);
    const found: Record<string, string> = {};
    if (!name.trim()) found.name = "Give the channel a name.";
    if (kind === "email" && emails.length === 0) found.email_recipients = "Add at least one address.";
    if (kind !== "email" && !/^https?:\/\//.test(url)) found.url = "An http:// or https:// address.";
    setProblems(found);
    if (Object.keys(found).length > 0 || team === "") return;
    const body: ChannelCreate =
      kind === "email" ? { team, name, kind, email_recipients: emails } : { team, name, kind, url };
    create.mutate(body, { onSuccess: (channel) => (channel.secret ? setCreated(channel) : onDone()) });
  }

  return (
    <form onSubmit={submit} noValidate>
      <TeamSelect teams={teams} value={team} onChange={setTeam} error={errorOf("team")} />
      <Field label="Name" error={errorOf("name")}>
        {(control) => <input {...control} className="input" value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <Field label="Kind" error={errorOf("kind")}>
        {(control) => (
          <select
            {...control}
            className="input"
            value={kind}
            onChange={(event) => setKind(event.target.value as ChannelCreate["kind"])}
          >
            <option value="webhook">Webhook (signed JSON)</option>
            <option value="slack">Slack-compatible incoming webhook</option>
            <option value="email">E-mail</option>
          </select>
        )}
      </Field>
      {kind === "email" ? (
        <Field label="Recipients" hint="Addresses separated by commas." error={errorOf("email_recipients")}>
          {(control) => (
            <input {...control} className="input" value={recipients} onChange={(e) => setRecipients(e.target.value)} />
          )}
        </Field>
      ) : (
        <Field label="URL" error={errorOf("url")}>
          {(control) => (
            <input {...control} className="input mono" value={url} onChange={(e) => setUrl(e.target.value)} />
          )}
        </Field>
      )}
      <FormError message={server.form} />
      <FormActions submitLabel="Create channel" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}

/** The signing secret, this once: the server keeps it encrypted and never shows it again. */
function CreatedChannel({ channel, onDone }: { channel: ChannelWithSecret; onDone: () => void }) {
  const secretId = useId();
  return (
    <div>
      <p className="callout callout--warning">
        Copy the signing secret now. <strong>It is not shown again.</strong> Each request carries
        <span className="mono"> X-StreamHub-Timestamp</span> and
        <span className="mono"> X-StreamHub-Signature: sha256=HMAC(secret, timestamp + "." + body)</span>.
      </p>
      <label htmlFor={secretId} className="field__label">
        Signing secret of {channel.name}
      </label>
      <input id={secretId} className="input mono" readOnly value={channel.secret} onFocus={(e) => e.target.select()} />
      <div className="dialog__actions">
        <button type="button" className="button button--primary" onClick={onDone}>
          I have saved it
        </button>
      </div>
    </div>
  );
}
