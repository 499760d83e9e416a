import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import type { paths } from "../schema";

type TransactionsPath = paths["/api/v1/clusters/{id}/transactions/"];
export type OpenTransaction = TransactionsPath["get"]["responses"][200]["content"]["application/json"][number];
type HangingPath = paths["/api/v1/clusters/{id}/transactions/hanging/"];
export type HangingTransaction = HangingPath["get"]["responses"][200]["content"]["application/json"][number];
export type AbortRequest = NonNullable<
  paths["/api/v1/clusters/{id}/transactions/abort/"]["post"]["requestBody"]
>["content"]["application/json"];

/** Open transactions are short-lived: the list refreshes while it is shown. */
export const TRANSACTIONS_POLL_MS = 5000;

export const transactionKeys = {
  open: (cluster: number) => ["transactions", cluster, "open"] as const,
  hanging: (cluster: number) => ["transactions", cluster, "hanging"] as const,
};

export function useOpenTransactions(cluster: number) {
  return useQuery({
    queryKey: transactionKeys.open(cluster),
    queryFn: async ({ signal }): Promise<OpenTransaction[]> =>
      unwrap(await apiClient.GET("/api/v1/clusters/{id}/transactions/", { params: { path: { id: cluster } }, signal })),
    refetchInterval: TRANSACTIONS_POLL_MS,
  });
}

/** Looking for hanging transactions asks every partition's leader: only on request. */
export function useHangingTransactions(cluster: number, { enabled }: { enabled: boolean }) {
  return useQuery({
    queryKey: transactionKeys.hanging(cluster),
    enabled,
    queryFn: async ({ signal }): Promise<HangingTransaction[]> =>
      unwrap(
        await apiClient.GET("/api/v1/clusters/{id}/transactions/hanging/", {
          params: { path: { id: cluster } },
          signal,
        }),
      ),
  });
}

export function useAbortTransaction(cluster: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: AbortRequest): Promise<void> => {
      unwrap(
        await apiClient.POST("/api/v1/clusters/{id}/transactions/abort/", { params: { path: { id: cluster } }, body }),
      );
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["transactions", cluster] }),
  });
}
