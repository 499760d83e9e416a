import { useProfile } from "../api/hooks/session";
import type { TeamRole } from "../api/types";
import { ROLE_LABELS } from "../auth/permissions";
import { PageHeader } from "../components/PageHeader";
import { ErrorState, LoadingState } from "../components/states";
import { Timestamp } from "../components/Timestamp";

const GRANTED_BY = (fromIdp: boolean) => (fromIdp ? "Identity provider" : "An administrator");

/** Who you are here: where your identity comes from, your provider groups, and what they gave you. */
export function ProfilePage() {
  const profile = useProfile();
  if (profile.isPending) return <LoadingState />;
  if (profile.isError) return <ErrorState error={profile.error} onRetry={() => void profile.refetch()} />;
  const { user, source, issuer, idp_groups: groups, organizations, teams } = profile.data;
  const sso = source === "oidc";
  return (
    <>
      <PageHeader title="Profile" description="Your identity, your groups at the identity provider, and your access." />
      <section className="section" aria-labelledby="identity-heading">
        <h2 id="identity-heading" className="section__title">
          Identity
        </h2>
        <dl className="details">
          <dt>Username</dt>
          <dd>{user.username}</dd>
          <dt>Email</dt>
          <dd>{user.email || "—"}</dd>
          <dt>Signs in with</dt>
          <dd>{sso ? `Single sign-on (${issuer})` : "A password kept here"}</dd>
          {sso ? (
            <>
              <dt>Last single sign-on</dt>
              <dd>{profile.data.last_sso_login_at ? <Timestamp value={profile.data.last_sso_login_at} /> : "—"}</dd>
            </>
          ) : null}
        </dl>
      </section>
      {sso ? (
        <section className="section" aria-labelledby="groups-heading">
          <h2 id="groups-heading" className="section__title">
            Groups at the identity provider
          </h2>
          {groups.length === 0 ? (
            <p>The provider named no groups at your last sign-in.</p>
          ) : (
            <ul aria-labelledby="groups-heading">
              {groups.map((group) => (
                <li key={group}>
                  <code>{group}</code>
                </li>
              ))}
            </ul>
          )}
        </section>
      ) : null}
      <section className="section" aria-labelledby="orgs-heading">
        <h2 id="orgs-heading" className="section__title">
          Organizations
        </h2>
        <table className="table" aria-labelledby="orgs-heading">
          <thead>
            <tr>
              <th>Organization</th>
              <th>Org admin</th>
              <th>Granted by</th>
            </tr>
          </thead>
          <tbody>
            {organizations.map((organization) => (
              <tr key={organization.id}>
                <td>{organization.name}</td>
                <td>{organization.is_org_admin ? "Yes" : "No"}</td>
                <td>{GRANTED_BY(organization.from_idp)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {organizations.length === 0 ? <p>You belong to no organization.</p> : null}
      </section>
      <section className="section" aria-labelledby="teams-heading">
        <h2 id="teams-heading" className="section__title">
          Teams
        </h2>
        <table className="table" aria-labelledby="teams-heading">
          <thead>
            <tr>
              <th>Team</th>
              <th>Organization</th>
              <th>Role</th>
              <th>Granted by</th>
            </tr>
          </thead>
          <tbody>
            {teams.map((team) => (
              <tr key={team.id}>
                <td>{team.name}</td>
                <td>{team.organization}</td>
                <td>{ROLE_LABELS[team.role as TeamRole] ?? team.role}</td>
                <td>{GRANTED_BY(team.from_idp)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {teams.length === 0 ? <p>You belong to no team.</p> : null}
      </section>
    </>
  );
}
