import { useState, type FormEvent } from "react";
import { useNavigate } from "react-router";

import { ApiError } from "../../api/errors";
import { useRegisterCluster } from "../../api/hooks/clusters";
import type { Organization, SaslMechanism, SecurityProtocol } from "../../api/types";
import { Field, FormActions, FormError } from "../../components/Field";
import { formErrorsOf } from "../../lib/formErrors";
import { ClusterNameField, useClusterName } from "./ClusterNameField";
import { OrganizationField } from "./OrganizationField";

const SECURITY_PROTOCOLS: readonly SecurityProtocol[] = ["PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL", "SSL"];
const SASL_MECHANISMS: readonly SaslMechanism[] = ["", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"];
const FIELDS = [
  "organization",
  "name",
  "bootstrap_servers",
  "security_protocol",
  "sasl_mechanism",
  "username",
  "password",
];
/** Refusals that mean "we tried the cluster and it did not work", shown as a callout with Kafka's own words. */
const CONNECTION_ERRORS = new Set(["cluster_unreachable", "authentication_failed"]);

function ConnectionError({ error }: { error: ApiError }) {
  const kafkaError = typeof error.details.kafka_error === "string" ? error.details.kafka_error : null;
  const detail = typeof error.details.message === "string" ? error.details.message : null;
  return (
    <div className="callout callout--danger" role="alert">
      <p>
        <strong>{error.code === "cluster_unreachable" ? "Cluster unreachable" : "Credentials refused"}.</strong>{" "}
        {error.message}
      </p>
      {kafkaError || detail ? <p className="mono">{[kafkaError, detail].filter(Boolean).join(": ")}</p> : null}
      <p className="muted">Check the bootstrap servers, the security protocol and the credentials, then try again.</p>
    </div>
  );
}

/** Registers an existing Kafka-compatible cluster; the API checks that it answers before saving it. */
export function RegisterClusterForm({
  organizations,
  onClose,
}: {
  organizations: Organization[];
  onClose: () => void;
}) {
  const navigate = useNavigate();
  const register = useRegisterCluster();
  const [organization, setOrganization] = useState<number | "">(organizations[0]?.id ?? "");
  const clusterName = useClusterName();
  const [bootstrapServers, setBootstrapServers] = useState("");
  const [securityProtocol, setSecurityProtocol] = useState<SecurityProtocol>("PLAINTEXT");
  const [saslMechanism, setSaslMechanism] = useState<SaslMechanism>("");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const usesSasl = securityProtocol.startsWith("SASL_");
  const connectionError =
    register.error instanceof ApiError && CONNECTION_ERRORS.has(register.error.code) ? register.error : null;
  const server = formErrorsOf(connectionError ? null : register.error, FIELDS);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!clusterName.validate() || organization === "") return;
    register.mutate(
      {
        organization,
        name: clusterName.name,
        bootstrap_servers: bootstrapServers.trim(),
        security_protocol: securityProtocol,
        sasl_mechanism: usesSasl ? saslMechanism : "",
        username: usesSasl ? username : "",
        password: usesSasl ? password : "",
      },
      {
        onSuccess: (cluster) => {
          onClose();
          void navigate(`/clusters/${cluster.id}`);
        },
      },
    );
  }

  return (
    <form onSubmit={submit} noValidate>
      <OrganizationField
        organizations={organizations}
        value={organization}
        onChange={setOrganization}
        error={server.fields.organization}
      />
      <ClusterNameField
        value={clusterName.name}
        onChange={clusterName.setName}
        error={clusterName.error ?? server.fields.name}
      />
      <Field label="Bootstrap servers" hint="host:port pairs, comma separated." error={server.fields.bootstrap_servers}>
        {(control) => (
          <input
            {...control}
            className="input mono"
            autoComplete="off"
            placeholder="kafka-1.example.com:9092"
            value={bootstrapServers}
            onChange={(event) => setBootstrapServers(event.target.value)}
          />
        )}
      </Field>
      <Field label="Security protocol" error={server.fields.security_protocol}>
        {(control) => (
          <select
            {...control}
            className="input"
            value={securityProtocol}
            onChange={(event) => setSecurityProtocol(event.target.value as SecurityProtocol)}
          >
            {SECURITY_PROTOCOLS.map((protocol) => (
              <option key={protocol} value={protocol}>
                {protocol}
              </option>
            ))}
          </select>
        )}
      </Field>
      {usesSasl ? (
        <>
          <Field label="SASL mechanism" error={server.fields.sasl_mechanism}>
            {(control) => (
              <select
                {...control}
                className="input"
                value={saslMechanism}
                onChange={(event) => setSaslMechanism(event.target.value as SaslMechanism)}
              >
                {SASL_MECHANISMS.map((mechanism) => (
                  <option key={mechanism} value={mechanism}>
                    {mechanism || "Choose…"}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Username" error={server.fields.username}>
            {(control) => (
              <input
                {...control}
                className="input"
                autoComplete="off"
                value={username}
                onChange={(event) => setUsername(event.target.value)}
              />
            )}
          </Field>
          <Field label="Password" hint="Stored encrypted; never shown again." error={server.fields.password}>
            {(control) => (
              <input
                {...control}
                className="input"
                type="password"
                autoComplete="new-password"
                value={password}
                onChange={(event) => setPassword(event.target.value)}
              />
            )}
          </Field>
        </>
      ) : null}
      {connectionError ? <ConnectionError error={connectionError} /> : <FormError message={server.form} />}
      <FormActions
        submitLabel={register.isPending ? "Connecting…" : "Register cluster"}
        pending={register.isPending}
        onCancel={onClose}
      />
    </form>
  );
}
