import { createColumnHelper } from "@tanstack/react-table";
import { useId, useState } from "react";
import { Link, useSearchParams } from "react-router";

import { useClusters } from "../api/hooks/clusters";
import { useSubjects, type SubjectSummary } from "../api/hooks/schemas";
import type { SchemaType } from "../api/schemaRegistry";
import type { Cluster } from "../api/types";
import { DataTable } from "../components/DataTable";
import { Dialog } from "../components/Dialog";
import { PageHeader } from "../components/PageHeader";
import { EmptyState, QueryView } from "../components/states";
import { CreateSubjectForm } from "./schemas/CreateSubjectForm";
import { subjectPath, topicOfSubject } from "./schemas/subjectNames";

interface SubjectRow extends SubjectSummary {
  topic: string;
  part: string;
}

const TYPE_LABELS: Record<SchemaType, string> = { AVRO: "Avro", JSON: "JSON Schema", PROTOBUF: "Protobuf" };

function columnsFor(cluster: number) {
  const column = createColumnHelper<SubjectRow>();
  return [
    column.accessor("subject", {
      header: "Subject",
      cell: (info) => (
        <Link className="mono" to={subjectPath(cluster, info.getValue())}>
          {info.getValue()}
        </Link>
      ),
    }),
    column.accessor("topic", {
      header: "Topic",
      cell: (info) => <span className="mono">{info.getValue() || "—"}</span>,
    }),
    column.accessor("part", { header: "Key or value", cell: (info) => info.getValue() || "—" }),
    column.accessor("schemaType", { header: "Type", cell: (info) => TYPE_LABELS[info.getValue()] ?? info.getValue() }),
    column.accessor("versions", {
      header: "Versions",
      cell: ({ row: { original } }) =>
        original.versions === original.latest ? original.versions : `${original.versions} (latest v${original.latest})`,
    }),
  ];
}

/** Clusters whose registry can answer: not gone and not still being created. */
function hasRegistry(cluster: Cluster): boolean {
  return !["deleted", "deleting", "requested"].includes(cluster.status);
}

/** `?cluster=<id>` in the URL; the first cluster when none is chosen. */
function useClusterChoice(clusters: Cluster[] | undefined): [number | undefined, (cluster: number) => void] {
  const [searchParams, setSearchParams] = useSearchParams();
  const raw = Number(searchParams.get("cluster"));
  const chosen = Number.isInteger(raw) && raw > 0 ? raw : undefined;
  const setCluster = (next: number) =>
    setSearchParams(
      (current) => {
        const params = new URLSearchParams(current);
        params.set("cluster", String(next));
        return params;
      },
      { replace: true },
    );
  return [chosen ?? clusters?.find(hasRegistry)?.id, setCluster];
}

export function SchemasPage() {
  const pickerId = useId();
  const clusters = useClusters();
  const usable = clusters.data?.filter(hasRegistry);
  const [cluster, setCluster] = useClusterChoice(usable);
  const subjects = useSubjects(cluster);
  const [creating, setCreating] = useState(false);

  return (
    <>
      <PageHeader
        title="Schemas"
        description="Each cluster's schema registry: subjects, their versions and compatibility rules."
        actions={
          cluster !== undefined ? (
            <button type="button" className="button button--primary" onClick={() => setCreating(true)}>
              New subject
            </button>
          ) : null
        }
      />
      <QueryView
        query={clusters}
        errorTitle="Could not load the clusters"
        isEmpty={() => (usable ?? []).length === 0}
        empty={<EmptyState title="No clusters yet" description="Schemas live in a cluster's registry." />}
      >
        {() => (
          <>
            <div className="inline-form">
              <div className="field">
                <label htmlFor={pickerId} className="field__label">
                  Cluster
                </label>
                <select
                  id={pickerId}
                  className="input"
                  value={cluster ?? ""}
                  onChange={(event) => setCluster(Number(event.target.value))}
                >
                  {(usable ?? []).map((option) => (
                    <option key={option.id} value={option.id}>
                      {option.name}
                    </option>
                  ))}
                </select>
              </div>
            </div>
            {cluster !== undefined ? (
              <QueryView
                query={subjects}
                errorTitle="Could not load the subjects"
                isEmpty={(list) => list.length === 0}
                empty={
                  <EmptyState
                    title="No subjects yet"
                    description="Producers register schemas when they first write, or register one through the registry API."
                  />
                }
              >
                {(list) => (
                  <DataTable
                    label="Subjects"
                    columns={columnsFor(cluster)}
                    rows={list.map((summary) => {
                      const use = topicOfSubject(summary.subject);
                      return { ...summary, topic: use?.topic ?? "", part: use?.part ?? "" };
                    })}
                    getRowId={(row) => row.subject}
                    initialSorting={[{ id: "subject", desc: false }]}
                    filterPlaceholder="Search subjects…"
                  />
                )}
              </QueryView>
            ) : null}
          </>
        )}
      </QueryView>
      {cluster !== undefined ? (
        <Dialog open={creating} title="New subject" onClose={() => setCreating(false)}>
          <CreateSubjectForm cluster={cluster} onCancel={() => setCreating(false)} />
        </Dialog>
      ) : null}
    </>
  );
}
