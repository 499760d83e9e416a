import type { Team } from "../../api/types";
import { Field } from "../../components/Field";

interface TeamSelectProps {
  teams: Team[];
  value: number | "";
  onChange: (team: number) => void;
  error?: string;
}

/** The owning team of a new rule, silence or channel: only teams the person may change. */
export function TeamSelect({ teams, value, onChange, error }: TeamSelectProps) {
  return (
    <Field label="Team" error={error}>
      {(control) => (
        <select {...control} className="input" value={value} onChange={(event) => onChange(Number(event.target.value))}>
          {teams.map((team) => (
            <option key={team.id} value={team.id}>
              {team.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
