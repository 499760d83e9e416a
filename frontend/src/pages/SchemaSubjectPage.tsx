import type { UseQueryResult } from "@tanstack/react-query";
import { Link, useParams } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { ApiError } from "../api/errors";
import { useAccess } from "../api/hooks/access";
import { useClusters } from "../api/hooks/clusters";
import { usePrefixes } from "../api/hooks/prefixes";
import { useDeletedVersions, useSubjectVersion, useSubjectVersions } from "../api/hooks/schemas";
import { can, roleForSubject } from "../auth/permissions";
import { PageHeader } from "../components/PageHeader";
import { EmptyState, QueryView } from "../components/states";
import { NotFoundPage } from "./NotFoundPage";
import { CompatibilitySection } from "./schemas/CompatibilitySection";
import { NewVersionSection } from "./schemas/NewVersionSection";
import { SubjectLifecycleSection } from "./schemas/SubjectLifecycleSection";
import { topicOfSubject } from "./schemas/subjectNames";
import { DiffSection, VersionsSection } from "./schemas/VersionsSection";

export function SchemaSubjectPage() {
  const params = useParams();
  const cluster = Number(params.cluster);
  const subject = params.subject ?? "";
  if (!Number.isInteger(cluster) || cluster <= 0 || !subject) return <NotFoundPage />;
  return <SubjectView cluster={cluster} subject={subject} />;
}

function UsedBy({ subject }: { subject: string }) {
  const use = topicOfSubject(subject);
  if (!use) {
    return <>Not named after a topic (record-name strategy or a shared subject).</>;
  }
  return (
    <>
      Used for the {use.part}s of topic <strong className="mono">{use.topic}</strong>.
    </>
  );
}

/** After a soft delete of its last version the registry answers "subject not found" (40401): with soft-deleted
 * versions left that is a subject with no live versions, whose soft-deleted ones can still be deleted for good. */
function liveVersions(query: UseQueryResult<number[]>, softDeleted: number[]): UseQueryResult<number[]> {
  if (softDeleted.length > 0 && query.error instanceof ApiError && query.error.code === "40401") {
    return { ...query, data: [], error: null, isError: false, isPending: false } as UseQueryResult<number[]>;
  }
  return query;
}

function SubjectView({ cluster, subject }: { cluster: number; subject: string }) {
  const clusters = useClusters();
  const access = useAccess();
  const prefixes = usePrefixes();
  const softDeleted = useDeletedVersions(cluster, subject);
  const versions = liveVersions(useSubjectVersions(cluster, subject), softDeleted.data ?? []);
  const latest = useSubjectVersion(cluster, subject, versions.data?.at(-1) ?? null);
  const clusterName = clusters.data?.find((each) => each.id === cluster)?.name ?? `cluster ${cluster}`;
  const organization = clusters.data?.find((each) => each.id === cluster)?.organization;
  // Deleting needs the same role as registering; shown even when every version is (soft) deleted.
  const mayDelete =
    access.data !== undefined &&
    prefixes.data !== undefined &&
    organization !== undefined &&
    can.writeSubject(roleForSubject(access.data, organization, subject, prefixes.data));

  return (
    <>
      <PageHeader
        title={subject}
        description={
          <>
            <Link to={`/schemas?cluster=${cluster}`}>{clusterName}</Link> · <UsedBy subject={subject} />
          </>
        }
      />
      <QueryView
        query={combineQueries(versions, clusters, access, prefixes)}
        errorTitle="Could not load the subject"
        isEmpty={([list]) => list.length === 0}
        empty={
          <EmptyState
            title="No live versions"
            description="Every version of this subject is deleted; soft-deleted ones are listed below."
          />
        }
      >
        {([list, clusterList, accessData, prefixList]) => {
          const organization = clusterList.find((each) => each.id === cluster)?.organization;
          const role =
            organization === undefined ? null : roleForSubject(accessData, organization, subject, prefixList);
          const mayWrite = can.writeSubject(role);
          return (
            <>
              <VersionsSection cluster={cluster} subject={subject} versions={list} />
              <DiffSection cluster={cluster} subject={subject} versions={list} />
              <CompatibilitySection cluster={cluster} subject={subject} canEdit={mayWrite} />
              <NewVersionSection
                key={latest.data?.schemaType ?? "AVRO"}
                cluster={cluster}
                subject={subject}
                schemaType={latest.data?.schemaType ?? "AVRO"}
                canRegister={mayWrite}
              />
            </>
          );
        }}
      </QueryView>
      {mayDelete ? (
        <SubjectLifecycleSection cluster={cluster} subject={subject} versions={versions.data ?? []} />
      ) : null}
    </>
  );
}
