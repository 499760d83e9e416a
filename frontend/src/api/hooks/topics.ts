import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type {
  AcceptedOperation,
  ProduceRequest,
  Produced,
  Purged,
  Topic,
  TopicConfigsUpdate,
  TopicCreate,
  TopicDetail,
  TopicPurge,
} from "../types";

export const topicKeys = {
  all: ["topics"] as const,
  list: () => [...topicKeys.all, "list"] as const,
  detail: (id: number) => [...topicKeys.all, "detail", id] as const,
  /** Invalidated whenever the topic's records change from the console (a produce, a purge). */
  messages: (id: number) => [...topicKeys.all, "messages", id] as const,
};

/**
 * Every topic the caller can see, read once page by page. The list page
 * filters and sorts this in the browser, which stays fast for thousands.
 */
export function useTopics() {
  return useQuery({
    queryKey: topicKeys.list(),
    queryFn: ({ signal }): Promise<Topic[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/topics/", { params: { query: { offset, limit } }, signal })),
      ),
  });
}

/** One topic with its live state (partitions, offsets, configs), which the API reads from the cluster. */
export function useTopic(id: number) {
  return useQuery({
    queryKey: topicKeys.detail(id),
    queryFn: async ({ signal }): Promise<TopicDetail> => {
      const topic = unwrap(await apiClient.GET("/api/v1/topics/{id}/", { params: { path: { id } }, signal }));
      // The schema types `live` as a free-form object; TopicLiveState is its real shape.
      return topic as unknown as TopicDetail;
    },
  });
}

/**
 * The API answers a validate-only request with the request itself (200), a creation the cluster confirmed
 * with the topic (201), and one the cluster did not confirm in time with the operation that settles its
 * outcome once the control plane has looked at the cluster (202).
 */
export type CreateTopicResult =
  | { validated: true }
  | { validated: false; topic: Topic }
  | { validated: false; operation: AcceptedOperation["operation"] };

/** A change to a topic: its result when the cluster confirmed it, or the operation confirming it (202). */
export type TopicChangeResult<T> = { done: T } | { operation: AcceptedOperation["operation"] };

function changeResult<T>(status: number, data: unknown): TopicChangeResult<T> {
  if (status === 202) return { operation: (data as AcceptedOperation).operation };
  return { done: data as T };
}

export function useCreateTopic() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: TopicCreate): Promise<CreateTopicResult> => {
      const result = await apiClient.POST("/api/v1/topics/", { body });
      const data = unwrap(result);
      if (result.response.status === 201) return { validated: false, topic: data as Topic };
      if (result.response.status === 202) {
        return { validated: false, operation: (data as unknown as AcceptedOperation).operation };
      }
      return { validated: true };
    },
    onSuccess: (result) => {
      if (!result.validated) return queryClient.invalidateQueries({ queryKey: topicKeys.list() });
    },
  });
}

/** The topic's page first: reading it live stores its size and message count, which the list then shows. */
async function refetchTopic(queryClient: ReturnType<typeof useQueryClient>, id: number) {
  await queryClient.invalidateQueries({ queryKey: topicKeys.detail(id) });
  await queryClient.invalidateQueries({ queryKey: topicKeys.list() });
}

export function useUpdateTopicConfigs(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (configs: TopicConfigsUpdate["configs"]): Promise<TopicChangeResult<Topic>> => {
      const result = await apiClient.PATCH("/api/v1/topics/{id}/configs/", {
        params: { path: { id } },
        body: { configs },
      });
      return changeResult<Topic>(result.response.status, unwrap(result));
    },
    onSuccess: () => refetchTopic(queryClient, id),
  });
}

export function useAddPartitions(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (partitions: number): Promise<TopicChangeResult<Topic>> => {
      const result = await apiClient.POST("/api/v1/topics/{id}/partitions/", {
        params: { path: { id } },
        body: { partitions },
      });
      return changeResult<Topic>(result.response.status, unwrap(result));
    },
    onSuccess: () => refetchTopic(queryClient, id),
  });
}

export function usePurgeTopic(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: TopicPurge): Promise<Purged> =>
      unwrap(await apiClient.POST("/api/v1/topics/{id}/purge/", { params: { path: { id } }, body })),
    onSuccess: () =>
      Promise.all([refetchTopic(queryClient, id), queryClient.invalidateQueries({ queryKey: topicKeys.messages(id) })]),
  });
}

export function useDeleteTopic(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (confirmName: string): Promise<TopicChangeResult<null>> => {
      const result = await apiClient.DELETE("/api/v1/topics/{id}/", {
        params: { path: { id } },
        // The API reads the confirmation from the body; the generated schema omits DELETE bodies.
        ...({ body: { confirm_name: confirmName } } as object),
      });
      return changeResult<null>(result.response.status, unwrap(result) ?? null);
    },
    onSuccess: () => {
      queryClient.removeQueries({ queryKey: topicKeys.detail(id) });
      // A deletion the cluster has not confirmed yet shows among the topics page's changes in progress.
      void queryClient.invalidateQueries({ queryKey: ["operations"] });
      return queryClient.invalidateQueries({ queryKey: topicKeys.list() });
    },
  });
}

export function useProduceMessage(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: ProduceRequest): Promise<Produced> =>
      unwrap(await apiClient.POST("/api/v1/topics/{id}/produce/", { params: { path: { id } }, body })),
    // The header's message count and size and any open browse change with the new record.
    onSuccess: () =>
      Promise.all([refetchTopic(queryClient, id), queryClient.invalidateQueries({ queryKey: topicKeys.messages(id) })]),
  });
}

/**
 * A number that grows each time the topic's records change from the console. The message browser
 * streams its records outside the query cache; it reads again when this changes, so invalidating
 * `topicKeys.messages(id)` reaches it like any cached query.
 */
export function useMessagesVersion(id: number): number {
  const queryClient = useQueryClient();
  const queryKey = topicKeys.messages(id);
  return useQuery({
    queryKey,
    queryFn: () => (queryClient.getQueryData<number>(queryKey) ?? 0) + 1,
    initialData: 0,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  }).data;
}
