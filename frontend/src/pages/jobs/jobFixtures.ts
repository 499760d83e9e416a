import type { CatalogEntry, JobRun } from "../../api/hooks/jobs";

export const keySkewEntry: CatalogEntry = {
  job: "key_skew",
  description:
    "Key cardinality and skew: per partition records, distinct keys, null-key share and bytes; the top keys.",
  parameters: { source: "TopicRange", top: "int" },
};

export const exportEntry: CatalogEntry = {
  job: "export_parquet",
  description: "Topic to Parquet.",
  parameters: { source: "TopicRange", directory: "str" },
};

export function jobRun(overrides: Partial<JobRun> = {}): JobRun {
  return {
    id: 12,
    url: "http://localhost/api/v1/job-runs/12/",
    team: 1,
    team_name: "Payments",
    cluster: 3,
    cluster_name: "orders",
    service_account: 20,
    service_account_name: "billing-app",
    job: "key_skew",
    parameters: { source: { topic: "payments.orders" }, top: 3 },
    compute_target: "local[2]",
    time_limit_seconds: 1800,
    state: "running",
    reason: "",
    progress: { stages_done: 1, stages_total: 3, tasks_done: 6, tasks_total: 8, records_read: 12000 },
    progress_fraction: 0.75,
    result: { tables: [], charts: [], documents: [], files: [], metrics: {} },
    cancel_requested: false,
    created_at: "2026-01-05T10:00:00Z",
    started_at: "2026-01-05T10:00:01Z",
    finished_at: null,
    duration_seconds: 4,
    ...overrides,
  };
}

export const keySkewResult: JobRun["result"] = {
  tables: [
    {
      name: "top_keys",
      columns: ["key", "records"],
      rows: [
        ["user-1", 700],
        ["user-2", 300],
      ],
    },
  ],
  charts: [
    {
      name: "records_per_partition",
      kind: "bar",
      x_label: "partition",
      x: [0, 1],
      series: [{ name: "records", values: [800, 200] }],
    },
  ],
  documents: [{ name: "summary", content: { skewed: true } }],
  files: ["parquet/part-0.parquet"],
  metrics: { records_read: 1000, records_per_second: 250.5 },
};
