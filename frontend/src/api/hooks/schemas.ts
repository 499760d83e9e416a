import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { ApiError } from "../errors";
import {
  schemaRegistry,
  type CompatibilityLevel,
  type SchemaInput,
  type SchemaType,
  type SubjectVersion,
} from "../schemaRegistry";

export const schemaKeys = {
  all: ["schemas"] as const,
  cluster: (cluster: number) => [...schemaKeys.all, cluster] as const,
  subjects: (cluster: number) => [...schemaKeys.cluster(cluster), "subjects"] as const,
  subject: (cluster: number, subject: string) => [...schemaKeys.cluster(cluster), "subject", subject] as const,
  versions: (cluster: number, subject: string) => [...schemaKeys.subject(cluster, subject), "versions"] as const,
  version: (cluster: number, subject: string, version: number) =>
    [...schemaKeys.subject(cluster, subject), "version", version] as const,
  config: (cluster: number, subject: string) => [...schemaKeys.subject(cluster, subject), "config"] as const,
};

/** A subject as the list shows it: its latest version's format and how many live versions it has. */
export interface SubjectSummary {
  subject: string;
  schemaType: SchemaType;
  versions: number;
  latest: number;
}

/** The registry lists versions, not subjects with counts: one summary per subject, in subject order. */
export function summarizeSubjects(versions: readonly SubjectVersion[]): SubjectSummary[] {
  const bySubject = new Map<string, SubjectSummary>();
  for (const each of versions) {
    const seen = bySubject.get(each.subject);
    const newer = !seen || each.version > seen.latest;
    bySubject.set(each.subject, {
      subject: each.subject,
      // Confluent's answers leave the type out for Avro, the default.
      schemaType: newer ? (each.schemaType ?? "AVRO") : seen.schemaType,
      versions: (seen?.versions ?? 0) + 1,
      latest: newer ? each.version : seen.latest,
    });
  }
  return [...bySubject.values()].sort((a, b) => a.subject.localeCompare(b.subject));
}

/** The cluster's subjects with type and version count, from one `GET /schemas` of the registry. */
export function useSubjects(cluster: number | undefined) {
  return useQuery({
    queryKey: schemaKeys.subjects(cluster ?? 0),
    enabled: cluster !== undefined,
    queryFn: async ({ signal }) => summarizeSubjects(await schemaRegistry.listLiveVersions(cluster ?? 0, signal)),
  });
}

export function useSubjectVersions(cluster: number, subject: string) {
  return useQuery({
    queryKey: schemaKeys.versions(cluster, subject),
    queryFn: ({ signal }) => schemaRegistry.listVersions(cluster, subject, signal),
  });
}

/** One version; versions never change once registered, so they are cached for good. */
export function useSubjectVersion(cluster: number, subject: string, version: number | null) {
  return useQuery({
    queryKey: schemaKeys.version(cluster, subject, version ?? 0),
    enabled: version !== null,
    staleTime: Infinity,
    queryFn: ({ signal }): Promise<SubjectVersion> => schemaRegistry.getVersion(cluster, subject, version ?? 0, signal),
  });
}

export function useSubjectConfig(cluster: number, subject: string) {
  return useQuery({
    queryKey: schemaKeys.config(cluster, subject),
    queryFn: ({ signal }) => schemaRegistry.getConfig(cluster, subject, signal),
  });
}

export function useSetCompatibility(cluster: number, subject: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (level: CompatibilityLevel) => schemaRegistry.setCompatibility(cluster, subject, level),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: schemaKeys.config(cluster, subject) }),
  });
}

export function useTestCompatibility(cluster: number, subject: string) {
  return useMutation({ mutationFn: (input: SchemaInput) => schemaRegistry.testCompatibility(cluster, subject, input) });
}

export function useRegisterSchema(cluster: number, subject: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: SchemaInput) => schemaRegistry.register(cluster, subject, input),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: schemaKeys.subjects(cluster) });
      return queryClient.invalidateQueries({ queryKey: schemaKeys.versions(cluster, subject) });
    },
  });
}

/** Soft-deleted versions of a subject (empty when there are none or the subject is unknown). */
export function useDeletedVersions(cluster: number, subject: string) {
  return useQuery({
    queryKey: [...schemaKeys.subject(cluster, subject), "deleted-versions"],
    queryFn: async ({ signal }): Promise<number[]> => {
      try {
        return await schemaRegistry.listDeletedVersions(cluster, subject, signal);
      } catch (error) {
        if (error instanceof ApiError && error.code === "40401") return [];
        throw error;
      }
    },
  });
}

/** Registry deletes: a subject or one version, soft or (after a soft delete) permanent. */
export function useDeleteSchema(cluster: number, subject: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ version, permanent }: { version: number | null; permanent: boolean }): Promise<void> => {
      if (version === null) await schemaRegistry.deleteSubject(cluster, subject, permanent);
      else await schemaRegistry.deleteVersion(cluster, subject, version, permanent);
    },
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: schemaKeys.subjects(cluster) }),
        queryClient.invalidateQueries({ queryKey: schemaKeys.subject(cluster, subject) }),
      ]),
  });
}
