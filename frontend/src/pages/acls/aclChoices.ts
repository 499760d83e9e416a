import type { AccessGrantCreate, AclBinding } from "../../api/types";

/** Kafka's ACL vocabulary as the API spells it (controlplane/acls/choices.py), with labels. */
export const RESOURCE_TYPES: readonly [AclBinding["resource_type"], string][] = [
  ["TOPIC", "Topic"],
  ["GROUP", "Consumer group"],
  ["TRANSACTIONAL_ID", "Transactional id"],
  ["BROKER", "Cluster"],
];
export const PATTERN_TYPES: readonly [AclBinding["pattern_type"], string][] = [
  ["LITERAL", "Literal"],
  ["PREFIXED", "Prefixed"],
];
export const OPERATIONS: readonly [AclBinding["operation"], string][] = [
  ["ALL", "All"],
  ["READ", "Read"],
  ["WRITE", "Write"],
  ["CREATE", "Create"],
  ["DELETE", "Delete"],
  ["ALTER", "Alter"],
  ["DESCRIBE", "Describe"],
  ["CLUSTER_ACTION", "Cluster action"],
  ["DESCRIBE_CONFIGS", "Describe configs"],
  ["ALTER_CONFIGS", "Alter configs"],
  ["IDEMPOTENT_WRITE", "Idempotent write"],
];
export const PERMISSIONS: readonly [NonNullable<AclBinding["permission"]>, string][] = [
  ["ALLOW", "Allow"],
  ["DENY", "Deny"],
];

export type TemplateName = AccessGrantCreate["template"];

export interface TemplateDescription {
  label: string;
  /** What the template grants, in the words of controlplane/acls/templates.py. */
  grants: string[];
  needsGroupPrefix: boolean;
  needsTransactionalIdPrefix: boolean;
}

export const TEMPLATES: Record<TemplateName, TemplateDescription> = {
  producer: {
    label: "Producer",
    grants: ["WRITE and DESCRIBE on topics with the topic prefix"],
    needsGroupPrefix: false,
    needsTransactionalIdPrefix: false,
  },
  transactional_producer: {
    label: "Transactional producer",
    grants: [
      "WRITE and DESCRIBE on topics with the topic prefix",
      "WRITE and DESCRIBE on transactional ids with the transactional-id prefix",
    ],
    needsGroupPrefix: false,
    needsTransactionalIdPrefix: true,
  },
  consumer: {
    label: "Consumer",
    grants: ["READ and DESCRIBE on topics with the topic prefix", "READ on consumer groups with the group prefix"],
    needsGroupPrefix: true,
    needsTransactionalIdPrefix: false,
  },
  share_consumer: {
    label: "Share consumer (queue)",
    grants: [
      "READ and DESCRIBE on topics with the topic prefix",
      "READ on share groups with the group prefix (all Kafka checks for a share group member)",
    ],
    needsGroupPrefix: true,
    needsTransactionalIdPrefix: false,
  },
  stream_app: {
    label: "Stream application",
    grants: [
      "READ, WRITE, DESCRIBE, CREATE and DELETE on topics with the topic prefix (internal topics included)",
      "READ and DESCRIBE on consumer groups with the group prefix",
      "WRITE and DESCRIBE on transactional ids with the group prefix",
    ],
    needsGroupPrefix: true,
    needsTransactionalIdPrefix: false,
  },
};

export function labelOf<Value extends string>(choices: readonly [Value, string][], value: string): string {
  return choices.find(([each]) => each === value)?.[1] ?? value;
}
