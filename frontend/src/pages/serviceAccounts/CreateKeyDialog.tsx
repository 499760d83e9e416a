import { useState, type FormEvent } from "react";

import { useCreateApiKey } from "../../api/hooks/apiKeys";
import type { ApiKeyWithSecret, ServiceAccount, TeamRole } from "../../api/types";
import { ROLE_LABELS } from "../../auth/permissions";
import { Dialog } from "../../components/Dialog";
import { Field, FormActions, FormError } from "../../components/Field";
import { formErrorsOf } from "../../lib/formErrors";

/** Lifetimes offered, in days (the API takes 1 to 3650); none means the key never expires. */
const LIFETIMES: { days: number | null; label: string }[] = [
  { days: null, label: "Never" },
  { days: 7, label: "7 days" },
  { days: 30, label: "30 days" },
  { days: 90, label: "90 days" },
  { days: 365, label: "1 year" },
];

interface CreateKeyDialogProps {
  open: boolean;
  account: ServiceAccount;
  /** Roles the signed-in person may give the key: never above their own. */
  roles: TeamRole[];
  onClose: () => void;
  onCreated: (key: ApiKeyWithSecret) => void;
}

export function CreateKeyDialog({ open, account, roles, onClose, onCreated }: CreateKeyDialogProps) {
  return (
    <Dialog open={open} title={`New API key for ${account.name}`} onClose={onClose}>
      <CreateKeyForm account={account} roles={roles} onCancel={onClose} onCreated={onCreated} />
    </Dialog>
  );
}

function CreateKeyForm({
  account,
  roles,
  onCancel,
  onCreated,
}: Omit<CreateKeyDialogProps, "open" | "onClose"> & { onCancel: () => void }) {
  const create = useCreateApiKey();
  const [name, setName] = useState("");
  const [role, setRole] = useState<TeamRole>(roles.includes("developer") ? "developer" : (roles[0] ?? "viewer"));
  const [lifetime, setLifetime] = useState("");
  const [localErrors, setLocalErrors] = useState<Record<string, string>>({});
  const server = formErrorsOf(create.error, ["name", "role", "expires_in_days"]);
  const errors = { ...server.fields, ...localErrors };

  function submit(event: FormEvent) {
    event.preventDefault();
    const found: Record<string, string> = {};
    if (!name.trim()) found.name = "Give the key a name, e.g. where it is used.";
    setLocalErrors(found);
    if (Object.keys(found).length > 0) return;
    create.mutate(
      { name: name.trim(), role, service_account: account.id, expires_in_days: lifetime ? Number(lifetime) : null },
      { onSuccess: onCreated },
    );
  }

  return (
    <form onSubmit={submit} noValidate>
      <Field label="Name" error={errors.name}>
        {(control) => (
          <input
            {...control}
            className="input"
            maxLength={100}
            autoComplete="off"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        )}
      </Field>
      <Field label="Role" hint="What the key may do, within the account's team." error={errors.role}>
        {(control) => (
          <select {...control} className="input" value={role} onChange={(e) => setRole(e.target.value as TeamRole)}>
            {roles.map((option) => (
              <option key={option} value={option}>
                {ROLE_LABELS[option]}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="Expires after"
        hint="Counted from now; the key's page shows the exact time."
        error={errors.expires_in_days}
      >
        {(control) => (
          <select {...control} className="input" value={lifetime} onChange={(e) => setLifetime(e.target.value)}>
            {LIFETIMES.map((option) => (
              <option key={option.label} value={option.days ?? ""}>
                {option.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <FormError message={server.form} />
      <FormActions submitLabel="Create key" pending={create.isPending} onCancel={onCancel} />
    </form>
  );
}
