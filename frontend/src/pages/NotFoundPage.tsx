import { Link } from "react-router";

import { PageHeader } from "../components/PageHeader";
import { EmptyState } from "../components/states";

export function NotFoundPage() {
  return (
    <>
      <PageHeader title="Page not found" />
      <EmptyState
        title="There is nothing at this address"
        description="It may have been moved or deleted."
        action={
          <Link to="/" className="button">
            Go to the overview
          </Link>
        }
      />
    </>
  );
}
