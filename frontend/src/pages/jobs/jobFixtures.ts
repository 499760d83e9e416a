import type { CatalogEntry, JobRun, StreamingJob } from "../../api/hooks/jobs";

export const keySkewEntry: CatalogEntry = {
  job: "key_skew",
  description:
    "Key cardinality and skew: per partition records, distinct keys, null-key share and bytes; the top keys.",
  parameters: { source: "TopicRange", top: "int" },
  required: ["source"],
};

export const exportEntry: CatalogEntry = {
  job: "export_parquet",
  description: "Topic to Parquet.",
  parameters: { source: "TopicRange", directory: "str" },
  required: ["source"],
};

export const streamTopicSqlEntry: CatalogEntry = {
  job: "stream_topic_sql",
  description: "Streaming topic → topic through a SQL transform over the view `source`.",
  parameters: { source: "StreamSource", target_topic: "str", sql: "str", trigger_seconds: "float" },
  required: ["source", "target_topic"],
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

export function streamingJob(overrides: Partial<StreamingJob> = {}): StreamingJob {
  return {
    id: 4,
    name: "orders-filter",
    team: 1,
    team_name: "Payments",
    cluster: 3,
    cluster_name: "orders",
    service_account: 20,
    service_account_name: "billing-app",
    job: "stream_topic_sql",
    parameters: { source: { topic: "payments.orders" }, target_topic: "payments.large" },
    compute_target: "local[1]",
    desired_state: "running",
    state: "running",
    reason: "",
    progress: {
      batch_id: 41,
      timestamp: "2026-01-05T10:02:00Z",
      num_input_rows: 120,
      input_rows_per_second: 98.5,
      processed_rows_per_second: 240.2,
      batch_duration_ms: 480,
      sink: { mode: "transactional", transactional_id: "streamhub-stream-4", last_committed_batch: 41 },
    },
    lag: {
      sampled_at: "2026-01-05T10:02:01Z",
      group: "spark-stream-4",
      batch_id: 40,
      total_lag: 1250,
      partitions: [
        {
          topic: "payments.orders",
          partition: 0,
          committed_offset: 5000,
          log_start_offset: 0,
          log_end_offset: 6000,
          lag_messages: 1000,
        },
        {
          topic: "payments.orders",
          partition: 1,
          committed_offset: 4750,
          log_start_offset: 0,
          log_end_offset: 5000,
          lag_messages: 250,
        },
      ],
    },
    restart_count: 1,
    consecutive_failures: 0,
    restarts: [
      { at: "2026-01-05T10:01:00Z", reason: "spark-submit exited with status 137", delay_seconds: 2, requested: false },
    ],
    next_restart_at: null,
    created_at: "2026-01-05T10:00:00Z",
    started_at: "2026-01-05T10:01:02Z",
    stopped_at: null,
    ...overrides,
  };
}
