import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import type { paths } from "../schema";

type Json<Response> = Response extends { content: { "application/json": infer Body } } ? Body : never;
type RunsPath = paths["/api/v1/job-runs/"];

export type JobRunPage = Json<RunsPath["get"]["responses"][200]>;
export type JobRun = JobRunPage["results"][number];
export type JobRunQuery = NonNullable<RunsPath["get"]["parameters"]["query"]>;
export type JobRunState = JobRun["state"];
export type JobName = JobRun["job"];
export type JobResult = JobRun["result"];
export type JobProgress = JobRun["progress"];
export type JobLaunch = NonNullable<RunsPath["post"]["requestBody"]>["content"]["application/json"];
export type CatalogEntry = Json<paths["/api/v1/job-runs/catalog/"]["get"]["responses"][200]>[number];

export const JOB_RUNS_PAGE_SIZE = 25;
/** How often a queued or running run is asked for its progress. */
export const RUN_POLL_MS = 1500;
export const FINISHED_RUN_STATES: ReadonlySet<JobRunState> = new Set(["succeeded", "failed", "cancelled"]);

export const jobKeys = {
  all: ["jobs"] as const,
  catalog: () => [...jobKeys.all, "catalog"] as const,
  runs: (query: JobRunQuery) => [...jobKeys.all, "runs", query] as const,
  run: (id: number) => [...jobKeys.all, "run", id] as const,
  log: (id: number, source: LogSource = "job") => [...jobKeys.all, "log", id, source] as const,
};

export function useJobCatalog() {
  return useQuery({
    queryKey: jobKeys.catalog(),
    queryFn: async ({ signal }): Promise<CatalogEntry[]> =>
      unwrap(await apiClient.GET("/api/v1/job-runs/catalog/", { signal })),
    staleTime: 5 * 60_000,
  });
}

export function useJobRuns(query: JobRunQuery) {
  return useQuery({
    queryKey: jobKeys.runs(query),
    queryFn: async ({ signal }): Promise<JobRunPage> =>
      unwrap(await apiClient.GET("/api/v1/job-runs/", { params: { query }, signal })),
    placeholderData: keepPreviousData,
    // Lists with unfinished runs refresh so their states and durations move.
    refetchInterval: (current) =>
      current.state.data?.results.some((run) => !FINISHED_RUN_STATES.has(run.state)) ? 3000 : false,
  });
}

/** One run, polled while it is queued or running. */
export function useJobRun(id: number) {
  return useQuery({
    queryKey: jobKeys.run(id),
    queryFn: async ({ signal }): Promise<JobRun> =>
      unwrap(await apiClient.GET("/api/v1/job-runs/{id}/", { params: { path: { id } }, signal })),
    refetchInterval: (current) =>
      current.state.data && FINISHED_RUN_STATES.has(current.state.data.state) ? false : RUN_POLL_MS,
  });
}

/** The job's own lines ("job"), or the driver's whole log with Spark's lines ("spark"). */
export type LogSource = "job" | "spark";

export function useJobRunLog(id: number, live: boolean, source: LogSource = "job") {
  return useQuery({
    queryKey: jobKeys.log(id, source),
    queryFn: async ({ signal }): Promise<string[]> =>
      unwrap(
        await apiClient.GET("/api/v1/job-runs/{id}/log/", {
          params: { path: { id }, query: { lines: 500, source } },
          signal,
        }),
      ).lines,
    refetchInterval: live ? 3000 : false,
  });
}

export function useLaunchJob() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: JobLaunch): Promise<JobRun> => unwrap(await apiClient.POST("/api/v1/job-runs/", { body })),
    onSuccess: (run) => {
      queryClient.setQueryData(jobKeys.run(run.id), run);
      return queryClient.invalidateQueries({ queryKey: [...jobKeys.all, "runs"] });
    },
  });
}

export function useCancelJobRun(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (): Promise<JobRun> =>
      unwrap(await apiClient.POST("/api/v1/job-runs/{id}/cancel/", { params: { path: { id } } })),
    onSuccess: (run) => {
      queryClient.setQueryData(jobKeys.run(id), run);
      return queryClient.invalidateQueries({ queryKey: [...jobKeys.all, "runs"] });
    },
  });
}

/** The download action's URL for one result file; a plain link lets the browser save it. */
export function downloadUrl(run: number, path: string): string {
  return `/api/v1/job-runs/${run}/download/?${new URLSearchParams({ path }).toString()}`;
}

type StreamsPath = paths["/api/v1/streaming-jobs/"];
export type StreamingJobPage = Json<StreamsPath["get"]["responses"][200]>;
export type StreamingJob = StreamingJobPage["results"][number];
export type StreamingJobState = StreamingJob["state"];
export type StreamAction = "start" | "stop" | "restart";
export type StreamCreate = NonNullable<StreamsPath["post"]["requestBody"]>["content"]["application/json"];
export type StreamingJobName = StreamCreate["job"];
/** How often a stream's progress and lag are asked for (the supervisor records lag every 5 s). */
export const STREAM_POLL_MS = 3000;

const streamKeys = {
  list: () => [...jobKeys.all, "streams"] as const,
  catalog: () => [...jobKeys.all, "stream-catalog"] as const,
  stream: (id: number) => [...jobKeys.all, "stream", id] as const,
  log: (id: number, source: LogSource = "job") => [...jobKeys.all, "stream-log", id, source] as const,
};

export function useStreamingJobs() {
  return useQuery({
    queryKey: streamKeys.list(),
    queryFn: async ({ signal }): Promise<StreamingJobPage> =>
      unwrap(await apiClient.GET("/api/v1/streaming-jobs/", { params: { query: { limit: 100 } }, signal })),
    refetchInterval: STREAM_POLL_MS,
  });
}

export function useStreamingCatalog() {
  return useQuery({
    queryKey: streamKeys.catalog(),
    queryFn: async ({ signal }): Promise<CatalogEntry[]> =>
      unwrap(await apiClient.GET("/api/v1/streaming-jobs/catalog/", { signal })),
    staleTime: 5 * 60_000,
  });
}

export function useCreateStream() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: StreamCreate): Promise<StreamingJob> =>
      unwrap(await apiClient.POST("/api/v1/streaming-jobs/", { body })),
    onSuccess: (stream) => {
      queryClient.setQueryData(streamKeys.stream(stream.id), stream);
      return queryClient.invalidateQueries({ queryKey: streamKeys.list() });
    },
  });
}

export function useStreamingJob(id: number) {
  return useQuery({
    queryKey: streamKeys.stream(id),
    queryFn: async ({ signal }): Promise<StreamingJob> =>
      unwrap(await apiClient.GET("/api/v1/streaming-jobs/{id}/", { params: { path: { id } }, signal })),
    refetchInterval: STREAM_POLL_MS,
  });
}

export function useStreamingJobLog(id: number, source: LogSource = "job") {
  return useQuery({
    queryKey: streamKeys.log(id, source),
    queryFn: async ({ signal }): Promise<string[]> =>
      unwrap(
        await apiClient.GET("/api/v1/streaming-jobs/{id}/log/", {
          params: { path: { id }, query: { lines: 300, source } },
          signal,
        }),
      ).lines,
    refetchInterval: STREAM_POLL_MS,
  });
}

export function useStreamAction(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({
      action,
      password = "",
    }: {
      action: StreamAction;
      password?: string;
    }): Promise<StreamingJob> => {
      const options = { params: { path: { id } } };
      if (action === "stop") return unwrap(await apiClient.POST("/api/v1/streaming-jobs/{id}/stop/", options));
      const path = action === "start" ? "/api/v1/streaming-jobs/{id}/start/" : "/api/v1/streaming-jobs/{id}/restart/";
      // The password is kept while the stream should run; a stop wipes it, so starting a stopped stream on a
      // SASL cluster needs it again (the API answers code "credentials" without it).
      return unwrap(await apiClient.POST(path, { ...options, body: { password } }));
    },
    onSuccess: (stream) => {
      queryClient.setQueryData(streamKeys.stream(id), stream);
      return queryClient.invalidateQueries({ queryKey: streamKeys.list() });
    },
  });
}
