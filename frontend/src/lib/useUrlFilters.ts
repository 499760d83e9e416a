import { useCallback, useMemo } from "react";
import { useSearchParams } from "react-router";

/**
 * Filters kept in the URL's search params, so a filtered page can be linked
 * to and survives a reload. Empty values are left out of the URL; changes
 * replace the history entry rather than adding one per keystroke.
 */
export function useUrlFilters<Name extends string>(
  names: readonly Name[],
): [Record<Name, string>, (changes: Partial<Record<Name, string>>) => void] {
  const [searchParams, setSearchParams] = useSearchParams();
  const key = names.map((name) => `${name}=${searchParams.get(name) ?? ""}`).join("&");
  // Recomputed only when one of these params changes, so the object can feed memos.
  const values = useMemo(
    () => Object.fromEntries(names.map((name) => [name, searchParams.get(name) ?? ""])) as Record<Name, string>,
    [key],
  );
  const setValues = useCallback(
    (changes: Partial<Record<Name, string>>) =>
      setSearchParams(
        (current) => {
          const next = new URLSearchParams(current);
          for (const [name, value] of Object.entries(changes) as [Name, string | undefined][]) {
            if (value) next.set(name, value);
            else next.delete(name);
          }
          return next;
        },
        { replace: true },
      ),
    [setSearchParams],
  );
  return [values, setValues];
}
