import { useOverview } from "../api/hooks/overview";
import { PageHeader } from "../components/PageHeader";
import { Timestamp } from "../components/Timestamp";
import { QueryView } from "../components/states";

export function OverviewPage() {
  const overview = useOverview();

  return (
    <>
      <PageHeader title="Overview" description="Your organization's Kafka service at a glance." />
      <QueryView query={overview} errorTitle="Could not load the overview">
        {(data) => (
          <>
            <section
              className={`stat-card stat-card--${data.worker.alive ? "neutral" : "warning"}`}
              aria-label="Background worker"
            >
              <span className="stat-card__label">Background worker</span>
              <span className="stat-card__value">{data.worker.alive ? "Running" : "Not reporting"}</span>
              <span className="muted">
                {data.worker.last_heartbeat ? (
                  <>
                    Last heartbeat <Timestamp value={data.worker.last_heartbeat} relative />
                  </>
                ) : (
                  "No heartbeat received yet"
                )}
              </span>
            </section>
            <p className="muted">Version {data.version}</p>
          </>
        )}
      </QueryView>
    </>
  );
}
