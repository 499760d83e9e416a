import type { UseMutationResult } from "@tanstack/react-query";
import { useState } from "react";

import { describeError } from "../api/errors";

/**
 * State for a ConfirmDialog that runs `mutation` on one row: `ask(row)` opens it, Cancel forgets the
 * row and the mutation's error, success closes it. Spread `dialog` into the ConfirmDialog.
 */
export function useConfirmedAction<Row, Data, Variables>(
  mutation: UseMutationResult<Data, Error, Variables>,
  variablesOf: (row: Row) => Variables,
) {
  const [target, setTarget] = useState<Row | null>(null);
  return {
    target,
    ask: setTarget,
    dialog: {
      open: target !== null,
      pending: mutation.isPending,
      error: mutation.isError ? describeError(mutation.error) : null,
      onCancel: () => {
        setTarget(null);
        mutation.reset();
      },
      onConfirm: () => {
        if (target !== null) mutation.mutate(variablesOf(target), { onSuccess: () => setTarget(null) });
      },
    },
  };
}
