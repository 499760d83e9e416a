/**
 * Names for the API's payloads, looked up through the paths rather than the
 * schema's component names, which the generator is free to rename.
 */
import type { paths } from "./schema";

type JsonBody<Response> = Response extends { content: { "application/json": infer Body } } ? Body : never;

export type Session = JsonBody<paths["/api/v1/auth/session/"]["get"]["responses"][200]>;
export type User = NonNullable<Session["user"]>;
export type LoginRequest = NonNullable<
  paths["/api/v1/auth/login/"]["post"]["requestBody"]
>["content"]["application/json"];
export type Overview = JsonBody<paths["/api/v1/overview/"]["get"]["responses"][200]>;

type ListBody<Path extends keyof paths> = paths[Path] extends { get: { responses: { 200: infer Ok } } }
  ? JsonBody<Ok>
  : never;
type ItemOf<Path extends keyof paths> = ListBody<Path> extends { results: (infer Item)[] } ? Item : never;
type PostBody<Path extends keyof paths> = paths[Path] extends {
  post: { requestBody?: { content: { "application/json": infer Body } } };
}
  ? Body
  : never;

/** A limit/offset page of any list endpoint. */
export interface Page<Item> {
  count: number;
  next?: string | null;
  previous?: string | null;
  results: Item[];
}

export type OrgMembership = ItemOf<"/api/v1/org-memberships/">;
export type Team = ItemOf<"/api/v1/teams/">;
export type Membership = ItemOf<"/api/v1/memberships/">;
export type TeamPrefix = ItemOf<"/api/v1/prefixes/">;
export type TeamPolicy = ItemOf<"/api/v1/policies/">;
export type ServiceAccount = ItemOf<"/api/v1/service-accounts/">;
export type ApiKey = ItemOf<"/api/v1/api-keys/">;
export type AuditEvent = ItemOf<"/api/v1/audit-events/">;
export type TeamRole = Membership["role"];
export type PrefixResourceType = TeamPrefix["resource_type"];

export type MembershipCreate = PostBody<"/api/v1/memberships/">;
export type TeamCreate = PostBody<"/api/v1/teams/">;
export type TeamUpdate = NonNullable<
  paths["/api/v1/teams/{id}/"]["patch"]["requestBody"]
>["content"]["application/json"];
export type Person = ItemOf<"/api/v1/people/">;
export type PersonStatus = Person["status"];
export type PersonCreate = PostBody<"/api/v1/people/">;
export type CreatedPerson = JsonBody<paths["/api/v1/people/"]["post"]["responses"][201]>;
export type IssuedLink = JsonBody<paths["/api/v1/people/{id}/password-link/"]["post"]["responses"][201]>;
export type PasswordLinkInfo = JsonBody<paths["/api/v1/auth/password-links/inspect/"]["post"]["responses"][200]>;
export type PrefixCreate = PostBody<"/api/v1/prefixes/">;
export type ServiceAccountCreate = PostBody<"/api/v1/service-accounts/">;
export type ApiKeyCreate = PostBody<"/api/v1/api-keys/">;
export type ApiKeyWithSecret = JsonBody<paths["/api/v1/api-keys/"]["post"]["responses"][201]>;
export type PolicyUpdate = NonNullable<
  paths["/api/v1/policies/{id}/"]["patch"]["requestBody"]
>["content"]["application/json"];
export type AuditEventFilters = NonNullable<paths["/api/v1/audit-events/"]["get"]["parameters"]["query"]>;

export type Organization = ItemOf<"/api/v1/organizations/">;
export type Cluster = ItemOf<"/api/v1/clusters/">;
export type ClusterStatus = Cluster["status"];
export type ClusterDetail = JsonBody<paths["/api/v1/clusters/{id}/"]["get"]["responses"][200]>;
export type Broker = ClusterDetail["brokers"][number];
export type BrokerConfigEntry = NonNullable<Broker["configs"]>[string];
export type BrokerDetail = JsonBody<paths["/api/v1/clusters/{id}/brokers/{node_id}/"]["get"]["responses"][200]>;
export type HostedReplica = BrokerDetail["replicas"][number];
export type Operation = JsonBody<paths["/api/v1/operations/{id}/"]["get"]["responses"][200]>;
export type AcceptedOperation = JsonBody<paths["/api/v1/clusters/"]["post"]["responses"][202]>;
export type ClusterCreate = PostBody<"/api/v1/clusters/">;
export type Engine = JsonBody<paths["/api/v1/clusters/engines/"]["get"]["responses"][200]>[number];
export type ClusterRegister = PostBody<"/api/v1/clusters/register/">;
export type SecurityProtocol = ClusterRegister["security_protocol"];
export type SaslMechanism = ClusterRegister["sasl_mechanism"];

type PatchBody<Path extends keyof paths> = paths[Path] extends {
  patch: { requestBody?: { content: { "application/json": infer Body } } };
}
  ? Body
  : never;

export type Topic = ItemOf<"/api/v1/topics/">;
/** A partition as the cluster describes it now (LiveStateSerializer; the schema types `live` loosely). */
export interface TopicPartition {
  partition: number;
  leader: number;
  replicas: number[];
  isr: number[];
  /** Replicas on brokers the cluster does not list as alive. */
  offline_replicas?: number[];
  under_replicated?: boolean;
  offline?: boolean;
  /** Replicas a reassignment is copying to / will drop. */
  adding_replicas?: number[];
  removing_replicas?: number[];
  start_offset: number;
  end_offset: number;
  size_bytes: number;
}
/** One config as the cluster reports it, with what an editor needs (type, units, choices, the team's rule). */
export type ConfigEntry = BrokerConfigEntry;
export type TopicConfigEntry = ConfigEntry;
export type ConfigUnit = NonNullable<ConfigEntry["unit"]>;
export interface TopicLiveState {
  exists: boolean;
  partitions: TopicPartition[];
  configs: Record<string, TopicConfigEntry>;
}
export type TopicDetail = Omit<JsonBody<paths["/api/v1/topics/{id}/"]["get"]["responses"][200]>, "live"> & {
  live: TopicLiveState;
};
export type TopicCreate = PostBody<"/api/v1/topics/">;
export type TopicConfigsUpdate = PatchBody<"/api/v1/topics/{id}/configs/">;
export type TopicPurge = PostBody<"/api/v1/topics/{id}/purge/">;
export type Purged = JsonBody<paths["/api/v1/topics/{id}/purge/"]["post"]["responses"][200]>;
export type MessageQuery = NonNullable<paths["/api/v1/topics/{id}/messages/"]["get"]["parameters"]["query"]>;
export type BrowseResult = ListBody<"/api/v1/topics/{id}/messages/">;
export type TopicMessage = BrowseResult["messages"][number];
export type ScanProgress = NonNullable<BrowseResult["progress"]>;
export type MessagePayload = TopicMessage["value"];
export type ProduceRequest = PostBody<"/api/v1/topics/{id}/produce/">;
export type Produced = JsonBody<paths["/api/v1/topics/{id}/produce/"]["post"]["responses"][201]>;

export type AclBinding = ItemOf<"/api/v1/acls/">;
export type AclBindingCreate = PostBody<"/api/v1/acls/">;
export type AclBindingFilters = NonNullable<paths["/api/v1/acls/"]["get"]["parameters"]["query"]>;
export type AccessGrant = ItemOf<"/api/v1/access-grants/">;
export type AccessGrantCreate = PostBody<"/api/v1/access-grants/">;
export type ClientQuota = ItemOf<"/api/v1/quotas/">;
export type ClientQuotaCreate = PostBody<"/api/v1/quotas/">;
export type ClientQuotaUpdate = PatchBody<"/api/v1/quotas/{id}/">;
export type ScramCredential = ItemOf<"/api/v1/scram-credentials/">;
export type ScramCredentialCreate = PostBody<"/api/v1/scram-credentials/">;
export type ScramCredentialWithPassword = JsonBody<paths["/api/v1/scram-credentials/"]["post"]["responses"][201]>;

export type AuthOptions = JsonBody<paths["/api/v1/auth/options/"]["get"]["responses"][200]>;
export type Profile = JsonBody<paths["/api/v1/auth/profile/"]["get"]["responses"][200]>;

/** A resource managed as code: the file set that declares it and the change set that last applied it. */
export type ManagedResource = ItemOf<"/api/v1/managed-resources/">;
export type ConnectCluster = ItemOf<"/api/v1/connect-clusters/">;
export type Connector = ItemOf<"/api/v1/connectors/">;
export type ConnectorDetail = JsonBody<paths["/api/v1/connectors/{id}/"]["get"]["responses"][200]>;
export type ConnectorLag = ConnectorDetail["lag"];
export type ConnectorPlugin = JsonBody<
  paths["/api/v1/connect-clusters/{id}/plugins/"]["get"]["responses"][200]
>[number];
export type ConnectorCreate = PostBody<"/api/v1/connectors/">;
export type ConnectClusterCreate = PostBody<"/api/v1/connect-clusters/">;
export type ReplicationFlow = ItemOf<"/api/v1/replication-flows/">;
export type ReplicationFlowDetail = JsonBody<paths["/api/v1/replication-flows/{id}/"]["get"]["responses"][200]>;
export type ReplicationFlowCreate = PostBody<"/api/v1/replication-flows/">;
export type ReplicationLag = JsonBody<paths["/api/v1/replication-flows/{id}/lag/"]["get"]["responses"][200]>;
export type FailOver = JsonBody<paths["/api/v1/replication-flows/{id}/fail-over-group/"]["post"]["responses"][200]>;
