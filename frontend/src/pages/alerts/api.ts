/**
 * Types and query hooks of the alerting API (/api/v1/alerts, alert-rules, alert-silences,
 * alert-channels, alert-notifications), one query-key factory for all of them.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../../api/client";
import { listAll } from "../../api/listAll";
import type { components } from "../../api/schema";

type Schemas = components["schemas"];
export type Alert = Schemas["Alert"];
export type AlertRule = Schemas["AlertRule"];
export type AlertRuleCreate = Schemas["AlertRuleCreateInputRequest"];
export type AlertRuleUpdate = Schemas["PatchedAlertRuleUpdateInputRequest"];
export type Silence = Schemas["Silence"];
export type SilenceCreate = Schemas["SilenceCreateInputRequest"];
export type Channel = Schemas["NotificationChannel"];
export type ChannelCreate = Schemas["NotificationChannelCreateInputRequest"];
export type ChannelWithSecret = Schemas["NotificationChannelWithSecret"];
export type Notification = Schemas["Notification"];
export type Metric = Schemas["AlertMetricEnum"];
export type RulePreviewInput = Schemas["AlertRulePreviewInputRequest"];
export type RulePreview = Schemas["RulePreview"];
export type Health = Schemas["HealthEnum"];

/** How often the active alerts refresh: about one sampling interval. */
export const ACTIVE_ALERTS_POLL_MS = 15_000;
/** How long the history tab looks back. */
export const HISTORY_PAGE_SIZE = 100;

export const alertKeys = {
  all: ["alerts"] as const,
  active: () => [...alertKeys.all, "active"] as const,
  history: (filters: HistoryFilters) => [...alertKeys.all, "history", filters] as const,
  rules: () => [...alertKeys.all, "rules"] as const,
  silences: () => [...alertKeys.all, "silences"] as const,
  channels: () => [...alertKeys.all, "channels"] as const,
  notification: (id: number) => [...alertKeys.all, "notification", id] as const,
};

export interface HistoryFilters {
  state?: "pending" | "firing" | "resolved";
  group?: string;
}

export function useActiveAlerts() {
  return useQuery({
    queryKey: alertKeys.active(),
    queryFn: ({ signal }): Promise<Alert[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/alerts/", { params: { query: { active: true, offset, limit } }, signal })),
      ),
    refetchInterval: ACTIVE_ALERTS_POLL_MS,
    // Coming back to the tab must not show an alert as firing that resolved meanwhile.
    refetchOnMount: "always",
  });
}

/** The newest alerts, resolved ones included; the server filters, one page is shown. */
export function useAlertHistory(filters: HistoryFilters) {
  return useQuery({
    queryKey: alertKeys.history(filters),
    queryFn: async ({ signal }) =>
      unwrap(
        await apiClient.GET("/api/v1/alerts/", {
          params: {
            query: {
              state: filters.state ? [filters.state] : undefined,
              group: filters.group || undefined,
              limit: HISTORY_PAGE_SIZE,
            },
          },
          signal,
        }),
      ),
  });
}

export function useAcknowledgeAlert() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<Alert> =>
      unwrap(await apiClient.POST("/api/v1/alerts/{id}/acknowledge/", { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: alertKeys.all }),
  });
}

export function useAlertRules() {
  return useQuery({
    queryKey: alertKeys.rules(),
    queryFn: ({ signal }): Promise<AlertRule[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/alert-rules/", { params: { query: { offset, limit } }, signal })),
      ),
  });
}

export function useSaveAlertRule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (change: { id: number; body: AlertRuleUpdate } | { id: null; body: AlertRuleCreate }) =>
      change.id === null
        ? unwrap(await apiClient.POST("/api/v1/alert-rules/", { body: change.body }))
        : unwrap(
            await apiClient.PATCH("/api/v1/alert-rules/{id}/", {
              params: { path: { id: change.id } },
              body: change.body,
            }),
          ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: alertKeys.all }),
  });
}

/** Groups the rule as typed matches now (the latest sampling run), with whether each breaches; nothing saved. */
export function useRulePreview(input: RulePreviewInput | null) {
  return useQuery({
    queryKey: [...alertKeys.all, "preview", input] as const,
    enabled: input !== null,
    queryFn: async ({ signal }): Promise<RulePreview> =>
      unwrap(await apiClient.POST("/api/v1/alert-rules/preview/", { body: input!, signal })),
    staleTime: 10_000,
  });
}

export function useDeleteAlertRule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<void> => {
      unwrap(await apiClient.DELETE("/api/v1/alert-rules/{id}/", { params: { path: { id } } }));
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: alertKeys.all }),
  });
}

export function useSilences() {
  return useQuery({
    queryKey: alertKeys.silences(),
    queryFn: ({ signal }): Promise<Silence[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/alert-silences/", { params: { query: { offset, limit } }, signal })),
      ),
  });
}

export function useCreateSilence() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: SilenceCreate): Promise<Silence> =>
      unwrap(await apiClient.POST("/api/v1/alert-silences/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: alertKeys.silences() }),
  });
}

export function useExpireSilence() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<Silence> =>
      unwrap(await apiClient.POST("/api/v1/alert-silences/{id}/expire/", { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: alertKeys.silences() }),
  });
}

export function useChannels() {
  return useQuery({
    queryKey: alertKeys.channels(),
    queryFn: ({ signal }): Promise<Channel[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/alert-channels/", { params: { query: { offset, limit } }, signal })),
      ),
  });
}

export function useCreateChannel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: ChannelCreate): Promise<ChannelWithSecret> =>
      unwrap(await apiClient.POST("/api/v1/alert-channels/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: alertKeys.channels() }),
  });
}

export function useSendTestNotification() {
  return useMutation({
    mutationFn: async (id: number): Promise<Notification> =>
      unwrap(await apiClient.POST("/api/v1/alert-channels/{id}/test/", { params: { path: { id } } })),
  });
}

/** A queued notification, re-read every second until it is sent or has failed. */
export function useNotification(id: number | null) {
  return useQuery({
    queryKey: alertKeys.notification(id ?? 0),
    enabled: id !== null,
    queryFn: async ({ signal }): Promise<Notification> =>
      unwrap(await apiClient.GET("/api/v1/alert-notifications/{id}/", { params: { path: { id: id ?? 0 } }, signal })),
    refetchInterval: (query) => (query.state.data?.status === "pending" ? 1000 : false),
  });
}
