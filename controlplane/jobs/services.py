"""Every change to job runs goes through these functions: launching (checked, audited, enqueued on the
`spark` queue), executing (called by the Celery task), cancelling, and reading logs and result files."""

from __future__ import annotations

import dataclasses
import importlib
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from controlplane.accounts.models import ServiceAccount
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.clusters.ownership import owner_in, prefix_table
from controlplane.core.changes import Change, audited_change
from controlplane.core.encryption import decrypt_secret, encrypt_secret
from controlplane.core.errors import Conflict, Forbidden, Missing, ServiceError
from controlplane.jobs import launcher
from controlplane.jobs.choices import FINISHED_STATES, RunState
from controlplane.jobs.models import JobRun
from controlplane.kafka.acls import Acl, describe_acls
from controlplane.kafka.connection import Connection
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.topics import list_topics
from controlplane.spark import analysis
from controlplane.spark.jobs import STREAMING_CATALOG
from controlplane.spark.jobs.runtime import parameters_from_json, single_select, split_resources
from controlplane.tenancy.access import Actor, require_team_role
from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from controlplane.tenancy.models import Team

logger = logging.getLogger(__name__)

SPARK_QUEUE = "spark"
MAX_TIME_LIMIT_SECONDS = 6 * 3600
PROGRESS_INTERVAL_SECONDS = 1.0
COMPUTE_TARGET_PREFIXES = ("local", "spark://", "k8s://", "sc://", "yarn")
SUBMIT_CHECK_TIMEOUT_SECONDS = 3.0  # the gateway's read-back bound: a create never waits longer on a cluster


def default_compute_target() -> str:
    return getattr(settings, "SPARK_MASTER", None) or os.environ.get("SPARK_MASTER", "local[2]")


def _setting(name: str, default: str | None = None) -> str | None:
    return getattr(settings, name, None) or os.environ.get(name) or default


def cluster_settings() -> launcher.ClusterSettings:
    """How runs reach the compute: see the README's Spark settings."""
    return launcher.ClusterSettings(
        artifacts_dir=Path(_setting("SPARK_ARTIFACTS_DIR") or Path(settings.DATA_DIR) / "spark-artifacts"),
        executor_python=_setting("SPARK_EXECUTOR_PYTHON"),
        ship_dependencies=(_setting("SPARK_SHIP_DEPENDENCIES", "true") or "").lower() != "false",
        master_web_url=_setting("SPARK_MASTER_WEB_URL"),
    )


def results_root() -> Path:
    configured = getattr(settings, "JOB_RESULTS_DIR", None) or os.environ.get("JOB_RESULTS_DIR")
    return Path(configured) if configured else Path(settings.DATA_DIR) / "job-results"


def run_directory(run: JobRun) -> Path:
    return results_root() / str(run.pk)


def _change(action: str, run: JobRun) -> Change:
    return Change(
        action=action,
        resource_type="job_run",
        organization_id=run.team.organization_id,
        team_id=run.team_id,
        team_name=run.team.name,
        extra={"job": run.job, "cluster": run.cluster.name, "compute_target": run.compute_target},
    )


def validate_parameters(job: str, parameters: dict[str, Any]) -> Any:
    """The job's parameters as its `Parameters`, refused when they do not fit; the SQL is checked by
    check_transform, once the cheaper checks passed."""
    module = importlib.import_module(f"controlplane.spark.jobs.{job}")
    try:
        own, _resources = split_resources(parameters)
        checked = parameters_from_json(module.Parameters, own)
        if not isinstance(getattr(checked, "sql", ""), str):
            raise ValueError("sql must be a string")
    except (TypeError, ValueError) as error:
        raise ServiceError(f"Invalid parameters for {job}: {error}", code="invalid_parameters") from None
    return checked


def check_transform(job: str, parameters: Any) -> None:
    """Refuses a transform Spark refuses (parsed and analysed against the source's columns by
    controlplane.spark.analysis) with Spark's own message and where in the text, and one without the columns
    the job's sink needs. The catalog's default transform is known good and needs no Spark; where Spark cannot
    be asked on this host (no Java), the driver judges, as before."""
    module = importlib.import_module(f"controlplane.spark.jobs.{job}")
    sql = getattr(parameters, "sql", None)
    delay = getattr(parameters, "watermark_delay", None)
    default = next((f.default for f in dataclasses.fields(module.Parameters) if f.name == "sql"), None)
    if sql is None or (sql == default and not delay):
        return
    watermark = (parameters.event_time_column, delay) if delay else None
    try:
        # Spark's parser accepts one query and nothing else, and says where it stops reading: its message is
        # more telling than the driver's own single-SELECT check (runtime.single_select).
        columns = analysis.check_sql(
            sql.strip().rstrip(";"), streaming=job in STREAMING_CATALOG, watermark=watermark
        )
    except analysis.SqlRefused as refused:
        raise ServiceError(
            f"Spark refuses the SQL: {refused.refusal.exception}: {refused.refusal.message}",
            code="invalid_sql",
            details=refused.refusal.as_json(),
        ) from None
    except analysis.AnalysisUnavailable as error:
        logger.warning("job %s: SQL not analysed at submit, the driver will judge: %s", job, error)
        try:
            single_select(sql)
        except ValueError as refusal:
            raise ServiceError(
                f"Invalid parameters for {job}: {refusal}", code="invalid_parameters"
            ) from None
        return
    missing = [name for name in getattr(module, "REQUIRED_COLUMNS", ()) if name not in columns]
    if missing:
        raise ServiceError(
            f"The transform must produce a {missing[0]!r} column; it produces {', '.join(columns)}.",
            code="invalid_sql",
            details={"columns": columns, "missing": missing},
        )


def topics_of(parameters: Any) -> tuple[set[str], set[str]]:
    """(topics read, topics written) named by a job's parameters: `topic` inside a source, `*_topic` fields
    (`target_topic`, …) are written."""
    read: set[str] = set()
    written: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "topic" and isinstance(item, str):
                    read.add(item)
                elif key.endswith("_topic") and isinstance(item, str):
                    written.add(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(parameters)
    return read, written


def _acl_allows(acls: list[Acl], principal: str, topic: str, operation: str) -> bool:
    """An ALLOW binding of the principal on the topic (literal, prefixed or `*`) for the operation or ALL,
    and no DENY that covers it (Kafka's rule: a DENY wins)."""
    covering = [
        acl
        for acl in acls
        if acl.principal == principal
        and acl.resource_type == "TOPIC"
        and acl.operation in (operation, "ALL")
        and (
            acl.resource_name == "*"
            or (acl.pattern_type == "LITERAL" and acl.resource_name == topic)
            or (acl.pattern_type == "PREFIXED" and topic.startswith(acl.resource_name))
        )
    ]
    return any(acl.permission == "ALLOW" for acl in covering) and not any(
        acl.permission == "DENY" for acl in covering
    )


def _require_topic_access(
    team: Team, cluster: Cluster, service_account: ServiceAccount | None, parameters: dict[str, Any]
) -> None:
    """Refuses at submit a run over topics the team may not read (or write): the team's own topics (by its
    prefixes) are allowed, others only when the run's service account holds an ACL for them on the cluster.
    When the cluster's ACLs cannot be read now the run is accepted: it reads with the service account's own
    credentials, so the broker still refuses what the account may not do. Refused names are not echoed."""
    read, written = topics_of(parameters)
    owners = prefix_table(team.organization_id, PrefixResourceType.TOPIC)
    foreign = {
        (topic, operation)
        for topics, operation in ((read, "READ"), (written, "WRITE"))
        for topic in topics
        if owner_in(owners, topic) != team.id
    }
    if not foreign:
        return
    refused = foreign
    if service_account is not None:
        try:
            acls = describe_acls(connection_for(cluster))
        except KafkaGatewayError:
            logger.info("job launch on cluster %s: ACLs unreadable, the broker will judge", cluster.pk)
            return
        principal = service_account.principal
        refused = {(t, op) for t, op in foreign if not _acl_allows(acls, principal, t, op)}
    if refused:
        raise Forbidden(
            "The team may not read (or write) every topic the job names: use the team's own topics or "
            "topics its service account is granted.",
            code="topic_not_allowed",
            details={
                "read": sum(op == "READ" for _, op in refused),
                "write": sum(op == "WRITE" for _, op in refused),
            },
        )


def require_source_topics_exist(cluster: Cluster, parameters: dict[str, Any]) -> None:
    """Refuses at submit a job whose source topic is not on the cluster, instead of a Spark application
    started only to fail (minutes under load, and for a stream then restarted with backoff). Runs after the
    access check, so only topics the team may read are named. A cluster that does not answer within the
    gateway's read-back timeout is left to the driver, which reports it."""
    read, _ = topics_of(parameters)
    if not read:
        return
    try:
        present = list_topics(connection_for(cluster), timeout_seconds=SUBMIT_CHECK_TIMEOUT_SECONDS)
    except KafkaGatewayError:
        logger.info("job submit on cluster %s: topics unreadable, the driver will judge", cluster.pk)
        return
    missing = sorted(read - set(present))
    if missing:
        raise ServiceError(
            f"The source topic {', '.join(missing)} does not exist on cluster {cluster.name}.",
            code="topic_not_found",
            details={"topics": missing},
        )


def require_credentials(cluster: Cluster, service_account: ServiceAccount | None, password: str) -> None:
    if cluster.security_protocol.startswith("SASL") and (service_account is None or not password):
        raise ServiceError(
            "This cluster needs SASL: give the team's service account and its password.", code="credentials"
        )


def require_launch(
    actor: Actor, team: Team, cluster: Cluster, service_account: ServiceAccount | None, password: str
) -> None:
    """What every Spark job (run or stream) needs at submit: a developer of the team, a cluster of its
    organization, the team's own service account, and credentials where the cluster needs them."""
    require_team_role(actor, team, TeamRole.DEVELOPER)
    if cluster.organization_id != team.organization_id:
        raise Forbidden("The cluster belongs to another organization.", code="other_organization")
    if service_account is not None and service_account.team_id != team.id:
        raise Forbidden("The service account belongs to another team.", code="other_team")
    require_credentials(cluster, service_account, password)


def launch_job_run(
    *,
    actor: Actor,
    team: Team,
    cluster: Cluster,
    job: str,
    parameters: dict[str, Any],
    service_account: ServiceAccount | None = None,
    password: str = "",
    compute_target: str | None = None,
    time_limit_seconds: int = 1800,
) -> JobRun:
    """Records a queued run and enqueues it; the Spark job reads as `service_account` with `password`."""
    target = compute_target or default_compute_target()
    run = JobRun(
        team=team,
        cluster=cluster,
        service_account=service_account,
        job=job,
        parameters=parameters,
        compute_target=target,
        time_limit_seconds=time_limit_seconds,
        credential_encrypted=encrypt_secret(password),
        created_by=actor.user,
    )
    change = _change("job_run.launch", run)
    with audited_change(actor=actor, change=change):
        require_launch(actor, team, cluster, service_account, password)
        if not target.startswith(COMPUTE_TARGET_PREFIXES):
            raise ServiceError(f"Unknown compute target {target!r}.", code="compute_target")
        if not 10 <= time_limit_seconds <= MAX_TIME_LIMIT_SECONDS:
            raise ServiceError(
                f"The time limit must be 10 to {MAX_TIME_LIMIT_SECONDS} seconds.", code="time_limit"
            )
        checked = validate_parameters(job, parameters)
        _require_topic_access(team, cluster, service_account, parameters)
        require_source_topics_exist(cluster, parameters)
        check_transform(job, checked)
        run.save()
        change.on(run)
        change.after = {
            "job": job,
            "parameters": parameters,
            "service_account": getattr(service_account, "name", None),
        }
    transaction.on_commit(lambda: enqueue_run(run.pk))
    return run


def enqueue_run(run_id: int) -> None:
    """Sent by name (`tasks.run_job`): the Celery entry points import the services, never back."""
    current_app.send_task("jobs.run_job", args=[run_id], queue=SPARK_QUEUE, ignore_result=True)


def cancel_job_run(*, actor: Actor, run: JobRun) -> JobRun:
    """A queued run is cancelled at once; a running one is stopped by its worker within a second or two."""
    change = _change("job_run.cancel", run)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, run.team, TeamRole.DEVELOPER)
        change.on(run)
        locked = JobRun.objects.select_for_update().get(pk=run.pk)
        if locked.state in FINISHED_STATES:
            raise Conflict(f"The run has already {locked.state}.", code="finished")
        locked.cancel_requested = True
        if locked.state == RunState.QUEUED:
            _finish(locked, RunState.CANCELLED, "Cancelled before it started.")
        else:
            locked.save(update_fields=["cancel_requested"])
    return locked


def kafka_config_for(run: JobRun) -> dict[str, object]:
    """librdkafka properties for the run: the cluster's address, the team's service account as the user."""
    cluster = connection_for(run.cluster)
    connection = Connection(
        bootstrap_servers=cluster.bootstrap_servers,
        security_protocol=cluster.security_protocol,
        sasl_mechanism=cluster.sasl_mechanism,
        username=run.service_account.name if run.service_account else "",
        password=decrypt_secret(run.credential_encrypted),
    )
    config = connection.client_config(timeout_seconds=10)
    config.pop("log.connection.close", None)
    # librdkafka logs its INFO lines (telemetry subscriptions, every reconnect) into the driver's log: only its
    # warnings and errors, unless the run asks Spark for INFO or DEBUG too.
    try:
        asked = split_resources(run.parameters)[1].spark_log_level
    except (TypeError, ValueError):
        asked = "WARN"
    config["log_level"] = 6 if asked in ("INFO", "DEBUG") else 4
    return config


def _finish(run: JobRun, state: str, reason: str = "", result: dict | None = None) -> None:
    run.state = state
    run.reason = reason
    run.finished_at = timezone.now()
    run.credential_encrypted = ""  # the password is only needed while the run runs
    run.process_group = None
    if result is not None:
        run.result = result
    run.save()


def execute_job_run(run_id: int) -> str:
    """Runs spark-submit for a queued run until it ends, is cancelled or exceeds its time limit."""
    run = JobRun.objects.select_related("cluster", "team", "service_account").filter(pk=run_id).first()
    if run is None or run.state in FINISHED_STATES:
        return "skipped"
    output_dir = run_directory(run)
    if run.state == RunState.RUNNING and run.process_group:
        # Redelivered after the worker died: whatever it had started is stopped and the run starts over.
        launcher.stop_session(run.process_group)
    secrets_dir = Path(tempfile.mkdtemp(prefix=f"job-{run.pk}-"))
    try:
        connection_file = launcher.write_connection_file(secrets_dir, kafka_config_for(run))
        parameters, resources = split_resources(run.parameters)
        compute = cluster_settings()
        spark = launcher.start(
            job=run.job,
            parameters=parameters,
            output_dir=output_dir,
            compute_target=run.compute_target,
            connection_file=connection_file,
            shipment=launcher.prepare_shipment(run.compute_target, compute),
            resources=resources,
            settings=compute,
        )
        run.state, run.started_at, run.process_group = RunState.RUNNING, timezone.now(), spark.session_id
        run.save(update_fields=["state", "started_at", "process_group"])
        return _watch(run, spark, compute)
    except OSError as error:
        _finish(run, RunState.FAILED, f"Could not start spark-submit: {error}")
        return RunState.FAILED
    finally:
        shutil.rmtree(secrets_dir, ignore_errors=True)


def _watch(run: JobRun, spark: launcher.SparkProcess, compute: launcher.ClusterSettings) -> str:
    deadline = time.monotonic() + run.time_limit_seconds
    while True:
        return_code = spark.process.poll()
        progress = launcher.run_progress(spark) if return_code is None else None
        if progress is not None:
            run.progress = progress
            run.save(update_fields=["progress"])
        if return_code is not None:
            break
        if JobRun.objects.filter(pk=run.pk, cancel_requested=True).exists():
            launcher.cancel(spark, compute)
            _finish(run, RunState.CANCELLED, "Cancelled while running.")
            return RunState.CANCELLED
        if time.monotonic() > deadline:
            launcher.cancel(spark, compute)
            _finish(run, RunState.FAILED, f"The job exceeded its time limit of {run.time_limit_seconds} s.")
            return RunState.FAILED
        time.sleep(PROGRESS_INTERVAL_SECONDS)
    result = launcher.read_result(spark.output_dir)
    if return_code == 0 and result is not None:
        if run.progress:
            run.progress = {**run.progress, "stages_done": run.progress.get("stages_total", 0)}
        _finish(run, RunState.SUCCEEDED, result=result)
        return RunState.SUCCEEDED
    _finish(run, RunState.FAILED, launcher.failure_reason(spark.log_path, return_code))
    return RunState.FAILED


def run_log(run: JobRun, lines: int = 200, source: str = "job") -> list[str]:
    return launcher.log_tail(run_directory(run), lines, source)


def result_file(run: JobRun, relative: str) -> Path:
    """A file the run produced, refused unless it is inside the run's directory and listed in its result."""
    root = run_directory(run).resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root) or relative not in run.result.get("files", []) or not path.is_file():
        raise Missing("No such result file.")
    return path
