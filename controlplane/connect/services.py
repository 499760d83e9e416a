"""Connect clusters (org admins) and connectors (teams): every change goes through these functions, which check
rights and guardrails, call the workers' REST API (rest.py) and Kafka, and audit.

Tenancy: one Kafka user per Connect cluster runs every connector on it, so what a connector may touch is
checked here, before Connect sees it: its name starts with one of the team's group prefixes (a sink's
consumer group is `connect-<name>`), every topic it names (topic, topics, topics.regex, topic.prefix, a dead
letter queue, a router's replacement) is inside the team's topic prefixes, and it references no config
provider itself. The workers' user gets ACLs on exactly those prefixes of the teams that have connectors.
Secrets are given apart from the config, written to a 0600 file in the secrets directory and referenced as
`${file:<path>:<key>}`; neither the API, the audit log nor our logs ever hold their values.
"""

from __future__ import annotations

import os
import re
import secrets as tokens
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from controlplane.clusters.connections import connection_for, default_replication_factor
from controlplane.clusters.models import Cluster
from controlplane.connect import rest, workers
from controlplane.connect.choices import (
    DEFAULT_ALLOWED_PLUGINS,
    ConnectClusterStatus,
    ConnectorState,
    WorkerStatus,
)
from controlplane.connect.models import ConnectCluster, Connector, ConnectWorker
from controlplane.core.changes import Change, audited_change
from controlplane.core.encryption import decrypt_secret, encrypt_secret
from controlplane.core.errors import Conflict, ServiceError
from controlplane.groups.models import ConsumerGroup
from controlplane.kafka.acls import Acl, create_acls, delete_acls
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.scram import delete_scram_credential, upsert_scram_credential
from controlplane.kafka.topics import delete_topic, list_topics
from controlplane.tenancy.access import Actor, require_org_admin, require_team_role
from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from controlplane.tenancy.models import Team, TeamPrefix

NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
CONNECTOR_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
MAX_WORKERS = 3
START_TIMEOUT_SECONDS = 180.0
SCRAM_ITERATIONS = 8192
TOPIC_OPERATIONS = ("READ", "WRITE", "DESCRIBE", "CREATE", "DESCRIBE_CONFIGS")
# Keys whose value is one topic or a comma-separated list of topics.
TOPIC_KEYS = ("topic", "topics", "topic.prefix", "errors.deadletterqueue.topic.name")
# Keys whose value is a regular expression over topic names, or a topic name a transform routes records to.
TOPIC_PATTERN_KEYS = ("topics.regex",)
ROUTING_KEY = re.compile(r"^transforms\.[^.]+\.(replacement|topic\.format|topic)$")
CONFIG_PROVIDER_REFERENCE = re.compile(r"\$\{[^}]*\}")
# Keys whose value is a file on the worker's host: FileStream's `file`, a schema history file, a database's or a
# Kafka client's TLS certificate, key or store.
LOCAL_PATH_KEY = re.compile(
    r"(^|\.)(file|filename|sslcert|sslkey|sslrootcert|keystore\.location|truststore\.location)$"
)


# --- Connect clusters -----------------------------------------------------------------------------------


def _cluster_change(action: str, connect_cluster: ConnectCluster | None, **fields: Any) -> Change:
    change = Change(action=action, resource_type="connect_cluster", **fields)
    if connect_cluster is not None:
        change.organization_id = connect_cluster.organization_id
        if connect_cluster.pk:
            change.on(connect_cluster)
    return change


def root_dir(connect_cluster: ConnectCluster) -> Path:
    return Path(settings.DATA_DIR) / "connect" / str(connect_cluster.pk)


def _group(connect_cluster: ConnectCluster) -> workers.WorkerGroup:
    return workers.WorkerGroup(
        group_id=connect_cluster.group_id,
        replication_factor=min(3, default_replication_factor(connect_cluster.cluster)),
        secrets_dir=root_dir(connect_cluster) / "secrets",
    )


def _login(connect_cluster: ConnectCluster) -> workers.ClusterLogin:
    cluster = connect_cluster.cluster
    return workers.ClusterLogin(
        bootstrap_servers=cluster.bootstrap_servers,
        security_protocol=cluster.security_protocol,
        sasl_mechanism=cluster.sasl_mechanism,
        username=connect_cluster.principal_name,
        password=decrypt_secret(connect_cluster.password_encrypted),
    )


def _plan(worker: ConnectWorker) -> workers.WorkerPlan:
    return workers.WorkerPlan(
        index=worker.index, rest_port=worker.rest_port, directory=Path(worker.directory)
    )


def client(connect_cluster: ConnectCluster) -> rest.ConnectRest:
    return rest.ConnectRest([_plan(worker).url for worker in connect_cluster.workers.all()])


def _principal(connect_cluster: ConnectCluster) -> str:
    return f"User:{connect_cluster.principal_name}"


def worker_acls(connect_cluster: ConnectCluster) -> list[Acl]:
    """The workers' own ACLs: their internal topics (named after the group), their group, the cluster's id."""
    principal, group = _principal(connect_cluster), connect_cluster.group_id
    acls = [Acl("TOPIC", group, "PREFIXED", principal, "*", op, "ALLOW") for op in TOPIC_OPERATIONS]
    acls += [Acl("GROUP", group, "LITERAL", principal, "*", op, "ALLOW") for op in ("READ", "DESCRIBE")]
    # A worker's first call reads the Kafka cluster's id (DescribeCluster), which needs DESCRIBE on it
    # (librdkafka names the CLUSTER resource type BROKER).
    acls.append(Acl("BROKER", "kafka-cluster", "LITERAL", principal, "*", "DESCRIBE", "ALLOW"))
    return acls


def team_acls(connect_cluster: ConnectCluster, team: Team) -> list[Acl]:
    """What connectors of `team` need the workers' user to hold: the team's topic prefixes, and the sink
    consumer groups `connect-<connector name>` of its group prefixes."""
    principal, acls = _principal(connect_cluster), []
    for prefix in _prefixes(team, PrefixResourceType.TOPIC):
        acls += [Acl("TOPIC", prefix, "PREFIXED", principal, "*", op, "ALLOW") for op in TOPIC_OPERATIONS]
    for prefix in _prefixes(team, PrefixResourceType.GROUP):
        acls += [
            Acl("GROUP", f"connect-{prefix}", "PREFIXED", principal, "*", op, "ALLOW")
            for op in ("READ", "DESCRIBE")
        ]
    return acls


def _prefixes(team: Team, resource_type: str) -> list[str]:
    return list(
        TeamPrefix.objects.filter(team=team, resource_type=resource_type).values_list("prefix", flat=True)
    )


def _wait_ready(connect_cluster: ConnectCluster, worker: ConnectWorker, timeout_seconds: float) -> None:
    plan = _plan(worker)
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        if workers.running_pid(plan, worker.pid) is None:
            raise workers.WorkerFailed(
                f"Worker {worker.index} exited during startup. Its log ends with:\n{workers.log_tail(plan)}"
            )
        if rest.answers(plan.url):
            return
        time.sleep(0.5)
    raise workers.WorkerFailed(
        f"Worker {worker.index} did not answer within {timeout_seconds:.0f} s. Its log ends with:\n"
        + workers.log_tail(plan)
    )


def _start_worker(connect_cluster: ConnectCluster, worker: ConnectWorker) -> None:
    plan = _plan(worker)
    workers.write_worker_config(plan, _login(connect_cluster), _group(connect_cluster))
    worker.pid = workers.start_worker(plan)
    worker.status = WorkerStatus.STARTING
    worker.save(update_fields=["pid", "status"])


def attach_connect_cluster(
    *,
    actor: Actor,
    cluster: Cluster,
    name: str,
    worker_count: int = 1,
    allowed_plugins: list[str] | None = None,
    max_tasks_per_team: int = 8,
    file_directory: str = "",
) -> ConnectCluster:
    """Runs `worker_count` distributed workers for `cluster` under a Kafka user of their own (SCRAM, with the
    ACLs of worker_acls), and returns once every worker serves its REST API."""
    change = _cluster_change(
        "connect_cluster.attach", None, organization_id=cluster.organization_id, resource_name=name
    )
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, cluster.organization)
        if not NAME.match(name):
            raise ServiceError(
                "A Connect cluster name is 1-63 lowercase letters, digits and dashes.", code="invalid_name"
            )
        if not 1 <= worker_count <= MAX_WORKERS:
            raise ServiceError(
                f"A Connect cluster runs 1 to {MAX_WORKERS} workers.", code="invalid_worker_count"
            )
        if not cluster.sasl_mechanism.startswith("SCRAM"):
            raise ServiceError(
                "Connect workers log in with SCRAM of their own: the cluster must listen with SASL/SCRAM.",
                code="unsupported_cluster",
            )
        if file_directory and not Path(file_directory).is_absolute():
            raise ServiceError(
                "The connectors' file directory is an absolute path.",
                code="invalid_file_directory",
                details={"fields": {"file_directory": ["not an absolute path"]}},
            )
        if (
            ConnectCluster.objects.filter(organization=cluster.organization, name=name)
            .exclude(status=ConnectClusterStatus.DELETED)
            .exists()
        ):
            raise Conflict(f"A Connect cluster named {name!r} already exists.", code="duplicate")
        password = tokens.token_urlsafe(32)
        connect_cluster = ConnectCluster.objects.create(
            organization=cluster.organization,
            cluster=cluster,
            name=name,
            worker_count=worker_count,
            allowed_plugins=list(allowed_plugins or []),
            max_tasks_per_team=max_tasks_per_team,
            file_directory=file_directory,
            password_encrypted=encrypt_secret(password),
        )
        suffix = tokens.token_hex(4)
        connect_cluster.group_id = f"streamhub-connect-{connect_cluster.pk}-{suffix}"
        connect_cluster.principal_name = f"streamhub-connect-{connect_cluster.pk}-{suffix}"
        connect_cluster.save(update_fields=["group_id", "principal_name"])
        change.on(connect_cluster)
        change.after = {
            "cluster": cluster.name,
            "workers": worker_count,
            "principal": _principal(connect_cluster),
        }
        taken: set[int] = set()
        for index in range(1, worker_count + 1):
            port = workers.free_port(taken)
            taken.add(port)
            ConnectWorker.objects.create(
                connect_cluster=connect_cluster,
                index=index,
                rest_port=port,
                directory=str(root_dir(connect_cluster) / f"worker-{index}"),
            )
    _provision(connect_cluster, password)
    return connect_cluster


def _provision(connect_cluster: ConnectCluster, password: str) -> None:
    """The slow part, after the attach is recorded: credential, ACLs, processes. A failure leaves the
    Connect cluster FAILED with the reason (delete cleans up what was made)."""
    connection = connection_for(connect_cluster.cluster)
    try:
        upsert_scram_credential(
            connection,
            user=connect_cluster.principal_name,
            mechanism=connect_cluster.cluster.sasl_mechanism,
            password=password,
            salt=tokens.token_bytes(16),
            iterations=SCRAM_ITERATIONS,
        )
        create_acls(connection, worker_acls(connect_cluster))
        all_workers = list(connect_cluster.workers.all())
        for worker in all_workers:
            _start_worker(connect_cluster, worker)
        for worker in all_workers:
            _wait_ready(connect_cluster, worker, START_TIMEOUT_SECONDS)
            worker.status = WorkerStatus.RUNNING
            worker.save(update_fields=["status"])
    except (KafkaGatewayError, workers.WorkerFailed) as error:
        connect_cluster.status = ConnectClusterStatus.FAILED
        connect_cluster.status_reason = str(error)
        connect_cluster.save(update_fields=["status", "status_reason"])
        return
    connect_cluster.status = ConnectClusterStatus.RUNNING
    connect_cluster.status_reason = ""
    connect_cluster.save(update_fields=["status", "status_reason"])


def connect_cluster_health(*, connect_cluster: ConnectCluster) -> dict[str, Any]:
    """Each worker's process and REST API as seen now; the Connect cluster's status follows."""
    report = []
    for worker in connect_cluster.workers.all():
        plan = _plan(worker)
        alive = workers.running_pid(plan, worker.pid) is not None
        serving = alive and rest.answers(plan.url)
        status = WorkerStatus.RUNNING if serving else WorkerStatus.STARTING if alive else WorkerStatus.STOPPED
        if worker.status != status:
            worker.status = status
            worker.save(update_fields=["status"])
        report.append({"index": worker.index, "status": status, "alive": alive, "serving": serving})
    serving = sum(1 for entry in report if entry["serving"])
    if connect_cluster.status in (ConnectClusterStatus.RUNNING, ConnectClusterStatus.DEGRADED):
        status = ConnectClusterStatus.RUNNING if serving == len(report) else ConnectClusterStatus.DEGRADED
        if status != connect_cluster.status:
            connect_cluster.status = status
            connect_cluster.save(update_fields=["status"])
    connectors = []
    if serving:
        try:
            connectors = client(connect_cluster).connectors()
        except (rest.ConnectUnreachable, rest.ConnectRefused):
            connectors = []
    return {"status": connect_cluster.status, "workers": report, "connectors": len(connectors)}


def restart_connect_cluster(*, actor: Actor, connect_cluster: ConnectCluster) -> ConnectCluster:
    """Restarts the workers one at a time (the others keep the connectors running meanwhile)."""
    change = _cluster_change("connect_cluster.restart", connect_cluster)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, connect_cluster.organization)
        try:
            for worker in connect_cluster.workers.all():
                workers.stop_worker(_plan(worker), worker.pid)
                _start_worker(connect_cluster, worker)
                _wait_ready(connect_cluster, worker, START_TIMEOUT_SECONDS)
                worker.status = WorkerStatus.RUNNING
                worker.restart_count += 1
                worker.save(update_fields=["status", "restart_count"])
        except workers.WorkerFailed as error:
            connect_cluster.status = ConnectClusterStatus.DEGRADED
            connect_cluster.status_reason = str(error)
            connect_cluster.save(update_fields=["status", "status_reason"])
            raise ServiceError(str(error), code="worker_failed") from error
        connect_cluster.status = ConnectClusterStatus.RUNNING
        connect_cluster.status_reason = ""
        connect_cluster.save(update_fields=["status", "status_reason"])
    return connect_cluster


def delete_connect_cluster(*, actor: Actor, connect_cluster: ConnectCluster) -> None:
    """Stops the workers, deletes their internal topics, ACLs and Kafka user, and their files. Refused while
    teams have connectors on it (they delete them first: their data is theirs to stop)."""
    change = _cluster_change("connect_cluster.delete", connect_cluster)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, connect_cluster.organization)
        if connect_cluster.connectors.exists():
            raise Conflict("Teams still have connectors on this Connect cluster.", code="in_use")
        # Replication flows' connectors are no Connector rows (their app sits on top of this one).
        if connect_cluster.replication_flows.exclude(state="deleted").exists():
            raise Conflict("Replication flows still run on this Connect cluster.", code="in_use")
        for worker in connect_cluster.workers.all():
            workers.stop_worker(_plan(worker), worker.pid)
            worker.status = WorkerStatus.STOPPED
            worker.save(update_fields=["status"])
        connection = connection_for(connect_cluster.cluster)
        existing = list_topics(connection)
        for topic in _group(connect_cluster).internal_topics:
            if topic in existing:
                delete_topic(connection, name=topic)
        teams = Team.objects.filter(organization=connect_cluster.organization)
        delete_acls(
            connection,
            worker_acls(connect_cluster)
            + [acl for team in teams for acl in team_acls(connect_cluster, team)],
        )
        try:
            delete_scram_credential(
                connection,
                user=connect_cluster.principal_name,
                mechanism=connect_cluster.cluster.sasl_mechanism,
            )
        except KafkaGatewayError as error:
            if error.error_name != "RESOURCE_NOT_FOUND":
                raise
        workers.remove_files(root_dir(connect_cluster))
        connect_cluster.status = ConnectClusterStatus.DELETED
        connect_cluster.password_encrypted = ""
        connect_cluster.save(update_fields=["status", "password_encrypted"])


def plugin_catalog(*, connect_cluster: ConnectCluster) -> list[dict[str, Any]]:
    """The connector plugins the workers have, each marked whether teams may use it here."""
    allowed = set(connect_cluster.allowed_plugins or DEFAULT_ALLOWED_PLUGINS)
    try:
        plugins = client(connect_cluster).plugins()
    except rest.ConnectUnreachable as error:
        raise ServiceError(str(error), code="connect_unreachable") from error
    return [
        {
            "class": plugin["class"],
            "type": plugin.get("type", ""),
            "version": plugin.get("version", ""),
            "allowed": plugin["class"] in allowed,
        }
        for plugin in plugins
    ]


# --- Connectors ------------------------------------------------------------------------------------------


def _connector_change(
    action: str, connector: Connector | None, team: Team, name: str, **extra: Any
) -> Change:
    change = Change(
        action=action,
        resource_type="connector",
        organization_id=team.organization_id,
        team_id=team.id,
        team_name=team.name,
        resource_name=name,
        extra=extra,
    )
    if connector is not None:
        change.on(connector)
    return change


def _inside(topic: str, prefixes: list[str]) -> bool:
    return any(topic.startswith(prefix) for prefix in prefixes)


def _regex_inside(pattern: str, prefixes: list[str]) -> bool:
    return any(pattern.startswith((re.escape(prefix), prefix.replace(".", r"\."))) for prefix in prefixes)


def check_connector_config(team: Team, name: str, config: dict[str, str]) -> None:
    """Refuses what would let a connector act beyond the team: see the module's docstring."""
    group_prefixes = _prefixes(team, PrefixResourceType.GROUP)
    if not _inside(name, group_prefixes):
        raise ServiceError(
            "A connector's name starts with one of the team's consumer group prefixes (a sink reads as group "
            "connect-<name>).",
            code="invalid_name",
            details={"prefixes": group_prefixes},
        )
    topic_prefixes = _prefixes(team, PrefixResourceType.TOPIC)
    outside: dict[str, str] = {}
    for key, value in config.items():
        if CONFIG_PROVIDER_REFERENCE.search(value):
            raise ServiceError(
                f"{key}: give secrets in `secrets`, not as a config provider reference.",
                code="invalid_config",
            )
        if key in TOPIC_KEYS:
            bad = [
                topic
                for topic in (part.strip() for part in value.split(","))
                if topic and not _inside(topic, topic_prefixes)
            ]
            if bad:
                outside[key] = ", ".join(bad)
        elif (key in TOPIC_PATTERN_KEYS and not _regex_inside(value, topic_prefixes)) or (
            ROUTING_KEY.match(key) and value and not _inside(value, topic_prefixes)
        ):
            outside[key] = value
    if outside:
        raise ServiceError(
            "A connector may only name the team's own topics.",
            code="topic_outside_team",
            details={
                "fields": {
                    key: [f"{value!r} is outside the team's topic prefixes"] for key, value in outside.items()
                },
                "prefixes": topic_prefixes,
            },
        )


def check_local_paths(connect_cluster: ConnectCluster, config: dict[str, str]) -> None:
    """Refuses a local file outside the Connect cluster's file directory (the workers run as the control
    plane's user: a team must not read /etc/passwd or the workers' own configs through a connector). The path
    is resolved first, so neither `..` nor a symbolic link leads out; a relative path would be relative to
    the worker's working directory, so it is refused too."""
    root = connect_cluster.file_directory
    outside: dict[str, list[str]] = {}
    for key, value in config.items():
        if not LOCAL_PATH_KEY.search(key) or not value:
            continue
        if not root:
            outside[key] = ["this Connect cluster lets connectors name no local file"]
        elif not Path(value).is_absolute():
            outside[key] = [f"an absolute path under {root}"]
        elif not Path(os.path.realpath(value)).is_relative_to(os.path.realpath(root)):
            outside[key] = [f"{value!r} is outside {root}"]
    if outside:
        raise ServiceError(
            f"Connectors may read and write files only under the directory the organization's admin set"
            f" ({root or 'none is set'}).",
            code="path_outside_directory",
            details={"fields": outside, "directory": root},
        )


def _secrets_path(connector_cluster: ConnectCluster, name: str) -> Path:
    return _group(connector_cluster).secrets_dir / f"{name}.properties"


def _write_secrets(connect_cluster: ConnectCluster, name: str, values: dict[str, str]) -> dict[str, str]:
    """Writes the connector's secrets file (0600) and returns the references that stand for them."""
    path = _secrets_path(connect_cluster, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    workers.write_private(path, workers.properties_text(values))
    return {key: f"${{{workers.CONFIG_PROVIDER}:{path}:{key}}}" for key in values}


def _read_secrets(connect_cluster: ConnectCluster, name: str) -> dict[str, str]:
    path = _secrets_path(connect_cluster, name)
    if not path.exists():
        return {}
    values = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition("=")
        values[key] = value.replace("\\\\", "\\")
    return values


def _validate(
    connect_cluster: ConnectCluster, connector_class: str, config: dict[str, str], plain: dict[str, str]
) -> None:
    """Connect's own validation of the full config (secrets resolved by the workers); errors per field. A
    PASSWORD field given in the plain config is refused too: it would be stored and shown."""
    try:
        answer = client(connect_cluster).validate(connector_class, config)
    except rest.ConnectRefused as error:
        raise ServiceError(
            error.message, code="invalid_config", details={"fields": {"connector.class": [error.message]}}
        ) from error
    except rest.ConnectUnreachable as error:
        raise ServiceError(str(error), code="connect_unreachable") from error
    fields: dict[str, list[str]] = {}
    for entry in answer.get("configs", []):
        value, definition = entry.get("value") or {}, entry.get("definition") or {}
        name = value.get("name") or definition.get("name")
        if value.get("errors"):
            fields[name] = list(value["errors"])
        if definition.get("type") == "PASSWORD" and plain.get(name):
            fields.setdefault(name, []).append("A password: give it in `secrets`, not in the config.")
    if fields:
        raise ServiceError(
            "Connect refused the connector's config.", code="invalid_config", details={"fields": fields}
        )


def _check_plugin_and_tasks(
    connect_cluster: ConnectCluster,
    team: Team,
    connector_class: str,
    tasks_max: int,
    replacing: Connector | None,
) -> None:
    allowed = connect_cluster.allowed_plugins or list(DEFAULT_ALLOWED_PLUGINS)
    if connector_class not in allowed:
        raise ServiceError(
            f"{connector_class} is not allowed on this Connect cluster.",
            code="plugin_not_allowed",
            details={"fields": {"connector.class": ["not allowed here"]}, "allowed": allowed},
        )
    used = sum(
        connector.tasks_max
        for connector in Connector.objects.filter(connect_cluster=connect_cluster, team=team)
        if replacing is None or connector.pk != replacing.pk
    )
    if used + tasks_max > connect_cluster.max_tasks_per_team:
        raise ServiceError(
            f"The team's connectors would ask for {used + tasks_max} tasks here; "
            f"{connect_cluster.max_tasks_per_team} is its limit.",
            code="task_limit",
            details={"fields": {"tasks.max": [f"at most {connect_cluster.max_tasks_per_team - used}"]}},
        )


def _tasks_max(config: dict[str, str]) -> int:
    try:
        return max(1, int(config.get("tasks.max", "1")))
    except ValueError:
        raise ServiceError(
            "tasks.max is a number.",
            code="invalid_config",
            details={"fields": {"tasks.max": ["not a number"]}},
        ) from None


def _apply(
    connect_cluster: ConnectCluster,
    team: Team,
    name: str,
    config: dict[str, str],
    secrets: dict[str, str],
    *,
    validate_only: bool,
) -> dict[str, str]:
    """Checks, validates and (unless validate_only) writes the connector to Connect; returns its config."""
    connector_class = config.get("connector.class", "")
    check_connector_config(team, name, config)
    # A secret fills a config key as well: `secrets: {"file": "/etc/passwd"}` would name a file too.
    check_local_paths(connect_cluster, {**config, **secrets})
    path = _secrets_path(connect_cluster, name)
    previous = path.read_text() if path.exists() else None

    def restore_secrets() -> None:
        """Puts back what the running connector resolves (nothing, for a connector not created yet)."""
        if previous is None:
            path.unlink(missing_ok=True)
        else:
            workers.write_private(path, previous)

    references = _write_secrets(connect_cluster, name, secrets) if secrets else {}
    full = {**config, **references, "name": name}
    try:
        _validate(connect_cluster, connector_class, full, config)
        if validate_only:
            restore_secrets()
            return full
        create_acls(connection_for(connect_cluster.cluster), team_acls(connect_cluster, team))
        client(connect_cluster).put_config(name, full)
    except (rest.ConnectRefused, rest.ConnectUnreachable) as error:
        restore_secrets()
        raise ServiceError(str(error), code="connect_refused") from error
    except Exception:
        restore_secrets()
        raise
    return full


def create_connector(
    *,
    actor: Actor,
    connect_cluster: ConnectCluster,
    team: Team,
    name: str,
    config: dict[str, str],
    secrets: dict[str, str] | None = None,
    validate_only: bool = False,
) -> Connector | None:
    """Creates the connector (None with validate_only: checked by Connect, nothing saved)."""
    secrets = secrets or {}
    change = _connector_change(
        "connector.create",
        None,
        team,
        name,
        connector_class=config.get("connector.class", ""),
        config=config,
        secret_keys=sorted(secrets),
    )
    with audited_change(actor=actor, change=change):
        require_team_role(actor, team, TeamRole.DEVELOPER)
        if connect_cluster.organization_id != team.organization_id:
            raise ServiceError(
                "The Connect cluster belongs to another organization.", code="other_organization"
            )
        if connect_cluster.status not in (ConnectClusterStatus.RUNNING, ConnectClusterStatus.DEGRADED):
            raise ServiceError(
                f"The Connect cluster is {connect_cluster.status}.", code="connect_cluster_not_running"
            )
        if not CONNECTOR_NAME.match(name):
            raise ServiceError(
                "A connector name is letters, digits, dots, dashes and underscores.", code="invalid_name"
            )
        if Connector.objects.filter(connect_cluster=connect_cluster, name=name).exists():
            raise Conflict(f"A connector named {name!r} exists on this Connect cluster.", code="duplicate")
        tasks_max = _tasks_max(config)
        _check_plugin_and_tasks(connect_cluster, team, config.get("connector.class", ""), tasks_max, None)
        with transaction.atomic():
            _apply(connect_cluster, team, name, config, secrets, validate_only=validate_only)
            if validate_only:
                return None
            connector = Connector.objects.create(
                connect_cluster=connect_cluster,
                team=team,
                name=name,
                connector_class=config["connector.class"],
                config=config,
                secret_keys=sorted(secrets),
                tasks_max=tasks_max,
            )
            if is_sink(config):
                # The sink's group `connect-<name>` is outside the team's group prefixes: recorded as the
                # team's now, so the lag sampler keeps it with the team's groups.
                ConsumerGroup.objects.update_or_create(
                    cluster=connect_cluster.cluster,
                    name=sink_group_name(connector),
                    defaults={"team": team},
                )
        change.on(connector)
    return connector


def update_connector(
    *, actor: Actor, connector: Connector, config: dict[str, str], secrets: dict[str, str] | None = None
) -> Connector:
    """Replaces the config; secrets given replace those keys, secrets not given are kept."""
    secrets = secrets or {}
    change = _connector_change(
        "connector.update",
        connector,
        connector.team,
        connector.name,
        config=config,
        secret_keys=sorted(secrets),
    )
    change.before = {"config": connector.config, "secret_keys": connector.secret_keys}
    with audited_change(actor=actor, change=change):
        require_team_role(actor, connector.team, TeamRole.DEVELOPER)
        connect_cluster = connector.connect_cluster
        if config.get("connector.class", connector.connector_class) != connector.connector_class:
            raise ServiceError(
                "A connector's class is fixed; create another connector.", code="class_changed"
            )
        config = {**config, "connector.class": connector.connector_class}
        tasks_max = _tasks_max(config)
        _check_plugin_and_tasks(
            connect_cluster, connector.team, connector.connector_class, tasks_max, connector
        )
        kept = {
            key: value
            for key, value in _read_secrets(connect_cluster, connector.name).items()
            if key not in secrets
        }
        _apply(
            connect_cluster, connector.team, connector.name, config, {**kept, **secrets}, validate_only=False
        )
        connector.config = config
        connector.secret_keys = sorted({*kept, *secrets})
        connector.tasks_max = tasks_max
        connector.save(update_fields=["config", "secret_keys", "tasks_max", "updated_at"])
    return connector


def _connect_call(call: Any) -> Any:
    try:
        return call()
    except rest.ConnectRefused as error:
        raise ServiceError(error.message, code="connect_refused") from error
    except rest.ConnectUnreachable as error:
        raise ServiceError(str(error), code="connect_unreachable") from error


def set_connector_state(*, actor: Actor, connector: Connector, state: str) -> Connector:
    """Pauses or resumes the connector and its tasks."""
    action = "connector.pause" if state == ConnectorState.PAUSED else "connector.resume"
    change = _connector_change(action, connector, connector.team, connector.name)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, connector.team, TeamRole.DEVELOPER)
        rest_client = client(connector.connect_cluster)
        _connect_call(
            lambda: (rest_client.pause if state == ConnectorState.PAUSED else rest_client.resume)(
                connector.name
            )
        )
        connector.desired_state = state
        connector.save(update_fields=["desired_state", "updated_at"])
    return connector


def restart_connector(
    *, actor: Actor, connector: Connector, task: int | None = None, only_failed: bool = False
) -> None:
    """Restarts one task, or the connector with its tasks (all, or only the failed ones)."""
    change = _connector_change(
        "connector.restart", connector, connector.team, connector.name, task=task, only_failed=only_failed
    )
    with audited_change(actor=actor, change=change):
        require_team_role(actor, connector.team, TeamRole.DEVELOPER)
        rest_client = client(connector.connect_cluster)
        if task is None:
            _connect_call(
                lambda: rest_client.restart(connector.name, include_tasks=True, only_failed=only_failed)
            )
        else:
            _connect_call(lambda: rest_client.restart_task(connector.name, task))


def delete_connector(*, actor: Actor, connector: Connector) -> None:
    change = _connector_change("connector.delete", connector, connector.team, connector.name)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, connector.team, TeamRole.DEVELOPER)
        try:
            client(connector.connect_cluster).delete(connector.name)
        except rest.ConnectRefused as error:
            if error.status != 404:  # already gone from Connect
                raise ServiceError(error.message, code="connect_refused") from error
        except rest.ConnectUnreachable as error:
            raise ServiceError(str(error), code="connect_unreachable") from error
        _secrets_path(connector.connect_cluster, connector.name).unlink(missing_ok=True)
        connector.delete()


def connector_secrets(*, connector: Connector) -> dict[str, str]:
    """The connector's secret values, for the control plane's own use (its database lag query); never shown."""
    return _read_secrets(connector.connect_cluster, connector.name)


def connector_offsets(*, connector: Connector) -> dict[str, Any]:
    """Connect's committed source offsets (or sink consumer offsets) of the connector."""
    return _connect_call(lambda: client(connector.connect_cluster).offsets(connector.name))


def is_sink(config: dict[str, str]) -> bool:
    """Connect's sinks name the topics they read (`topics` or `topics.regex`); sources never do."""
    return bool(config.get("topics") or config.get("topics.regex"))


def sink_group_name(connector: Connector) -> str:
    """The consumer group a sink connector reads as (Connect's `connect-<name>`)."""
    return f"connect-{connector.name}"


def connector_status(*, connector: Connector) -> dict[str, Any]:
    """Connect's status of the connector and each task (with the error trace of a failed one)."""
    try:
        status = client(connector.connect_cluster).status(connector.name)
    except rest.ConnectRefused as error:
        return {"state": "UNKNOWN", "error": error.message, "tasks": []}
    except rest.ConnectUnreachable as error:
        return {"state": "UNREACHABLE", "error": str(error), "tasks": []}
    # Workers are named by their index: their REST addresses are the control plane's business only.
    names = {
        f"{workers.HOST}:{worker.rest_port}": f"worker {worker.index}"
        for worker in connector.connect_cluster.workers.all()
    }
    return {
        "state": status["connector"]["state"],
        "worker": names.get(status["connector"].get("worker_id", ""), ""),
        "trace": status["connector"].get("trace", ""),
        "tasks": [
            {
                "id": task["id"],
                "state": task["state"],
                "worker": names.get(task.get("worker_id", ""), ""),
                "trace": task.get("trace", ""),
            }
            for task in status.get("tasks", [])
        ],
    }


# --- Connectors the control plane runs itself ------------------------------------------------------------
# Replication flows (controlplane.replication) build their MirrorMaker 2 connectors' configs themselves, after
# their own tenancy checks: these put them on the workers without a team's Connector row (teams cannot edit
# or delete them through the connectors API). Secrets go to the same 0600 files, referenced through the config
# provider.


def put_system_connector(
    *, connect_cluster: ConnectCluster, name: str, config: dict[str, str], secrets: dict[str, str]
) -> None:
    """Creates or replaces the connector `name`; Connect's validation errors are refused per field."""
    references = _write_secrets(connect_cluster, name, secrets) if secrets else {}
    full = {**config, **references, "name": name}
    _validate(connect_cluster, config.get("connector.class", ""), full, config)
    _connect_call(lambda: client(connect_cluster).put_config(name, full))


def set_system_connector_state(*, connect_cluster: ConnectCluster, name: str, state: str) -> None:
    rest_client = client(connect_cluster)
    _connect_call(lambda: (rest_client.pause if state == ConnectorState.PAUSED else rest_client.resume)(name))


def delete_system_connector(*, connect_cluster: ConnectCluster, name: str) -> None:
    """Removes the connector from Connect (already gone is fine) and its secrets file."""
    try:
        client(connect_cluster).delete(name)
    except rest.ConnectRefused as error:
        if error.status != 404:
            raise ServiceError(error.message, code="connect_refused") from error
    except rest.ConnectUnreachable as error:
        raise ServiceError(str(error), code="connect_unreachable") from error
    _secrets_path(connect_cluster, name).unlink(missing_ok=True)


def system_connector_state(*, connect_cluster: ConnectCluster, name: str) -> dict[str, Any]:
    """Connect's state of the connector and its tasks (traces included), as connector_status gives it."""
    try:
        status = client(connect_cluster).status(name)
    except rest.ConnectRefused as error:
        return {"state": "UNKNOWN", "error": error.message, "tasks": []}
    except rest.ConnectUnreachable as error:
        return {"state": "UNREACHABLE", "error": str(error), "tasks": []}
    return {
        "state": status["connector"]["state"],
        "trace": status["connector"].get("trace", ""),
        "tasks": [
            {"id": task["id"], "state": task["state"], "trace": task.get("trace", "")}
            for task in status.get("tasks", [])
        ],
    }
