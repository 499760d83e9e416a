import { useMemo, useState } from "react";

import { useAccess } from "../api/hooks/access";
import { useSession } from "../api/hooks/session";
import { useTeams } from "../api/hooks/teams";
import type { TeamRole } from "../api/types";
import { ROLE_LABELS } from "../auth/permissions";
import { SelectField } from "../components/FormFields";
import { PageHeader } from "../components/PageHeader";
import { LoadingState } from "../components/states";
import { browserTimeZone, formatTimestamp, storedTimeZone, storeTimeZone } from "../lib/time";
import { setThemePreference, themePreference, type ThemePreference } from "../theme/theme";

const THEMES: [ThemePreference, string][] = [
  ["system", "Follow the system"],
  ["light", "Light"],
  ["dark", "Dark"],
];

/** Every IANA zone the browser knows; old browsers without the list get a few common ones. */
function knownTimeZones(): string[] {
  const intl = Intl as typeof Intl & { supportedValuesOf?: (key: string) => string[] };
  return (
    intl.supportedValuesOf?.("timeZone") ?? ["UTC", "Europe/London", "Europe/Berlin", "America/New_York", "Asia/Tokyo"]
  );
}

export function SettingsPage() {
  return (
    <>
      <PageHeader title="Settings" description="Your profile and how the console shows things in this browser." />
      <ProfileSection />
      <DisplaySection />
      <SystemSection />
    </>
  );
}

function ProfileSection() {
  const session = useSession();
  const access = useAccess();
  const teams = useTeams();
  const user = session.data?.user;
  if (!user) return <LoadingState />;
  const roles = [...(access.data?.teamRoles ?? new Map<number, TeamRole>())].map(([teamId, role]) => ({
    team: teams.data?.find((team) => team.id === teamId)?.name ?? `Team ${teamId}`,
    role,
  }));
  return (
    <section className="section" aria-labelledby="profile-heading">
      <h2 id="profile-heading" className="section__title">
        Profile
      </h2>
      <dl className="details">
        <dt>Username</dt>
        <dd>{user.username}</dd>
        <dt>Email</dt>
        <dd>{user.email || "—"}</dd>
        <dt>Platform admin</dt>
        <dd>{user.is_superuser ? "Yes" : "No"}</dd>
        <dt>Organizations you administer</dt>
        <dd>{access.data ? access.data.adminOrganizations.size : "…"}</dd>
        <dt>Team roles</dt>
        <dd>
          {roles.length === 0 ? "None" : roles.map(({ team, role }) => `${team}: ${ROLE_LABELS[role]}`).join(", ")}
        </dd>
      </dl>
    </section>
  );
}

function DisplaySection() {
  const zones = useMemo(knownTimeZones, []);
  const [zone, setZone] = useState(storedTimeZone() ?? "");
  const [theme, setTheme] = useState<ThemePreference>(themePreference);
  const browserZone = browserTimeZone();

  return (
    <section className="section" aria-labelledby="display-heading">
      <h2 id="display-heading" className="section__title">
        Display
      </h2>
      <SelectField
        label="Time zone"
        value={zone}
        choices={zones.map((each) => [each, each] as const)}
        emptyLabel={`Browser default (${browserZone})`}
        hint={`Times show like this: ${formatTimestamp(new Date(), zone || browserZone)}`}
        onChange={(chosen) => {
          storeTimeZone(chosen || null);
          setZone(chosen);
        }}
      />
      <fieldset className="field">
        <legend className="field__label">Theme</legend>
        {THEMES.map(([value, label]) => (
          <label key={value} className="radio">
            <input
              type="radio"
              name="theme"
              value={value}
              checked={theme === value}
              onChange={() => {
                setThemePreference(value);
                setTheme(value);
              }}
            />{" "}
            {label}
          </label>
        ))}
      </fieldset>
    </section>
  );
}

function SystemSection() {
  return (
    <section className="section" aria-labelledby="system-heading">
      <h2 id="system-heading" className="section__title">
        System
      </h2>
      <dl className="details">
        <dt>REST API</dt>
        <dd className="mono">/api/v1/</dd>
        <dt>API documentation</dt>
        <dd>
          <a href="/api/docs/">Swagger UI</a> · <a href="/api/redoc/">ReDoc</a> ·{" "}
          <a href="/api/schema/">OpenAPI schema</a>
        </dd>
        <dt>Console build</dt>
        <dd>{import.meta.env.MODE}</dd>
      </dl>
    </section>
  );
}
