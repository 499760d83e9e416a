import { useOverview } from "../api/hooks/overview";
import { PageHeader } from "../components/PageHeader";
import { StatCard } from "../components/StatCard";
import { QueryView } from "../components/states";

export function OverviewPage() {
  const overview = useOverview();

  return (
    <>
      <PageHeader title="Overview" description="Your organization's Kafka service at a glance." />
      <QueryView query={overview} errorTitle="Could not load the overview">
        {(data) => (
          <>
            <ul className="stat-grid" aria-label="Totals">
              <li>
                <StatCard label="Clusters" value={data.clusters} to="/clusters" />
              </li>
              <li>
                <StatCard label="Topics" value={data.topics} to="/topics" />
              </li>
              <li>
                <StatCard label="Service accounts" value={data.service_accounts} to="/service-accounts" />
              </li>
              <li>
                <StatCard
                  label="Firing alerts"
                  value={data.firing_alerts}
                  to="/alerts"
                  tone={data.firing_alerts > 0 ? "warning" : "neutral"}
                />
              </li>
            </ul>
            <p className="muted">Version {data.version}</p>
          </>
        )}
      </QueryView>
    </>
  );
}
