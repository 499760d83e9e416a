import type { Choice } from "../../components/FormFields";

/** Partitions 0 to count - 1 as drop-down choices (values as text, as forms and URLs keep them). */
export function partitionChoices(count: number): Choice<string>[] {
  return Array.from({ length: count }, (_, partition) => [String(partition), String(partition)] as const);
}
