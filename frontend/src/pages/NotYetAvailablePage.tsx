import { PageHeader } from "../components/PageHeader";
import { EmptyState } from "../components/states";

/** Stands in for a section whose page has not been built yet. */
export function NotYetAvailablePage({ title }: { title: string }) {
  return (
    <>
      <PageHeader title={title} />
      <EmptyState
        title="Not available yet"
        description={`The ${title.toLowerCase()} page is not part of this version of the console.`}
      />
    </>
  );
}
