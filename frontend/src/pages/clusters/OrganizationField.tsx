import type { Organization } from "../../api/types";
import { Field } from "../../components/Field";

interface OrganizationFieldProps {
  organizations: Organization[];
  value: number | "";
  onChange: (organization: number) => void;
  error?: string;
}

/** Asks which organization only when the person administers more than one. */
export function OrganizationField({ organizations, value, onChange, error }: OrganizationFieldProps) {
  if (organizations.length <= 1 && !error) return null;
  return (
    <Field label="Organization" error={error}>
      {(control) => (
        <select {...control} className="input" value={value} onChange={(event) => onChange(Number(event.target.value))}>
          {organizations.map((organization) => (
            <option key={organization.id} value={organization.id}>
              {organization.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
