import type {
  ApiKey,
  AuditEvent,
  Membership,
  ServiceAccount,
  Session,
  Team,
  TeamPolicy,
  TeamPrefix,
} from "../api/types";
import { json, type StubbedResponse } from "./fetchStub";

/** A list endpoint's answer: everything on one page. */
export function page<Item>(results: Item[], count: number = results.length): StubbedResponse {
  return json(200, { count, next: null, previous: null, results });
}

export function sessionFor(username: string, isSuperuser = false): Session {
  return {
    authenticated: true,
    user: { id: 7, username, email: `${username}@example.com`, is_superuser: isSuperuser },
  };
}

export const payments: Team = {
  id: 1,
  organization: 10,
  name: "Payments",
  slug: "payments",
  description: "Card payments",
  created_at: "2026-01-01T10:00:00Z",
};
export const search: Team = { ...payments, id: 2, name: "Search", slug: "search", description: "" };

export function membership(id: number, team: number, username: string, role: Membership["role"]): Membership {
  return { id, team, username, role, created_at: "2026-01-02T10:00:00Z" };
}

export const paymentsPrefix: TeamPrefix = {
  id: 5,
  organization: 10,
  team: 1,
  resource_type: "topic",
  prefix: "payments.",
  created_at: "2026-01-02T10:00:00Z",
};

/** The API's guardrail defaults (controlplane/tenancy/guardrails.py). */
export const GUARDRAIL_DEFAULTS: TeamPolicy["default_limits"] = {
  max_partitions_per_topic: 1000,
  max_total_partitions: 3000,
  max_replication_factor: 5,
  max_retention_ms: 2592000000,
  min_segment_bytes: 1048576,
  max_segment_bytes: 1073741824,
  min_segment_ms: 600000,
  admin_operations_per_minute: 60,
};

export const paymentsPolicy: TeamPolicy = {
  id: 3,
  team: 1,
  naming_pattern: "^payments\\.",
  max_partitions_per_topic: 12,
  max_retention_ms: null,
  max_total_partitions: null,
  max_replication_factor: null,
  min_segment_bytes: null,
  max_segment_bytes: null,
  min_segment_ms: null,
  admin_operations_per_minute: null,
  allowed_topic_configs: null,
  effective_limits: { ...GUARDRAIL_DEFAULTS, max_partitions_per_topic: 12 },
  default_limits: GUARDRAIL_DEFAULTS,
  updated_at: "2026-01-02T10:00:00Z",
};

export const billingAccount: ServiceAccount = {
  id: 20,
  organization: 10,
  team: 1,
  name: "billing-app",
  principal: "User:billing-app",
  description: "Charges cards",
  created_at: "2026-01-03T10:00:00Z",
};

export function apiKey(overrides: Partial<ApiKey> = {}): ApiKey {
  return {
    key_id: "k1a2b3",
    name: "prod",
    role: "developer",
    owner: "service-account:billing-app",
    service_account: 20,
    status: "active",
    created_at: "2026-01-04T10:00:00Z",
    expires_at: null,
    last_used_at: null,
    revoked_at: null,
    overlap_until: null,
    rotated_from: "",
    ...overrides,
  };
}

export function auditEvent(overrides: Partial<AuditEvent> = {}): AuditEvent {
  return {
    id: 100,
    timestamp: "2026-01-05T10:00:00Z",
    organization_id: 10,
    team_id: 1,
    team_name: "Payments",
    actor_type: "user",
    actor_name: "ada",
    actor_user: 7,
    via: "session",
    api_key_id: "",
    action: "membership.update",
    resource_type: "membership",
    resource_id: "4",
    resource_name: "bo",
    before: { user: "bo", role: "viewer" },
    after: { user: "bo", role: "developer" },
    result: "success",
    reason: "",
    client_address: "127.0.0.1",
    ...overrides,
  };
}

/**
 * Answers the requests the console makes to learn who is signed in ("me")
 * and their rights: the session, org-admin memberships and team memberships.
 */
export function signedInHandlers(options: { orgAdminOf?: number[]; teamRoles?: Membership[] }) {
  return {
    "GET /api/v1/auth/session/": json(200, sessionFor("me")),
    "GET /api/v1/org-memberships/": page(
      (options.orgAdminOf ?? []).map((organization, index) => ({
        id: index + 1,
        organization,
        username: "me",
        is_org_admin: true,
        created_at: "2026-01-01T10:00:00Z",
      })),
    ),
    "GET /api/v1/memberships/": page(options.teamRoles ?? []),
  };
}

export function query(request: Request): URLSearchParams {
  return new URL(request.url).searchParams;
}
