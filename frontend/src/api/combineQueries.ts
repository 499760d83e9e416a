/** The parts of a react-query result that QueryView reads. */
export interface QueryState<T> {
  data: T | undefined;
  error: unknown;
  isPending: boolean;
  isError: boolean;
  refetch: () => unknown;
}

type DataOf<Queries> = { [K in keyof Queries]: Queries[K] extends QueryState<infer T> ? T : never };

/**
 * Several queries seen as one, for pages that need them all before showing
 * anything: pending while any is, failed if any failed, retrying only those.
 */
export function combineQueries<Queries extends readonly QueryState<unknown>[]>(
  ...queries: Queries
): QueryState<DataOf<Queries>> {
  const failed = queries.find((query) => query.isError);
  const ready = queries.every((query) => query.data !== undefined);
  return {
    data: ready ? (queries.map((query) => query.data) as DataOf<Queries>) : undefined,
    error: failed?.error ?? null,
    isPending: !failed && queries.some((query) => query.isPending),
    isError: failed !== undefined,
    refetch: () => {
      for (const query of queries) if (query.isError) void query.refetch();
    },
  };
}
