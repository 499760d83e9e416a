"""Managed streaming jobs: creating, starting, stopping and restarting them (checked, audited), and the
supervisor that keeps each one running.

A stream that should run has one supervisor: a long-running Celery task on the `spark-streams` queue
(tasks.supervise_stream). It starts spark-submit (the driver runs on the worker's host), records the query's
progress and the stream's lag, stops it on request, and after a failure starts it again from its checkpoint
after an exponential backoff (STREAMING_RESTART_BACKOFF_SECONDS doubling up to
STREAMING_RESTART_BACKOFF_MAX_SECONDS), giving up after STREAMING_MAX_CONSECUTIVE_FAILURES failures in a row
(a driver that completed a micro-batch resets the count). It heartbeats in the row: a beat task
(tasks.watch_streams) enqueues a new supervisor for a stream whose heartbeat went stale (its worker died),
and a supervisor only works on a stream it has claimed, so two never drive one stream.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from controlplane.accounts.models import ServiceAccount
from controlplane.acls.models import AclBinding
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.core.changes import Change, audited_change
from controlplane.core.encryption import encrypt_secret
from controlplane.core.errors import Conflict, ServiceError
from controlplane.jobs import launcher
from controlplane.jobs.choices import DesiredState, StreamState
from controlplane.jobs.models import StreamingJob
from controlplane.jobs.services import (
    _require_topic_access,
    check_transform,
    cluster_settings,
    default_compute_target,
    kafka_config_for,
    require_credentials,
    require_launch,
    require_source_topics_exist,
    validate_parameters,
)
from controlplane.kafka.acls import Acl, create_acls
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.spark import streaming
from controlplane.spark.jobs.runtime import split_resources
from controlplane.spark.planning import TopicReadError, planning_consumer, watermarks
from controlplane.tenancy.access import Actor, require_team_role
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Team

logger = logging.getLogger(__name__)

STREAMS_QUEUE = "spark-streams"
# A supervisor whose heartbeat is older than this is taken for dead: another may claim the stream.
SUPERVISOR_STALE_SECONDS = 60
HEARTBEAT_SECONDS = 5.0
WATCH_INTERVAL_SECONDS = 1.0
LAG_INTERVAL_SECONDS = 5.0
RESTARTS_KEPT = 50
# Streaming jobs that write through streaming.TopicBatchSink.
TOPIC_SINK_JOBS = ("stream_topic_sql",)
# Celery needs a bound: after it the worker ends the task, and watch_streams starts a new supervisor that
# restarts the driver from its checkpoint.
SUPERVISOR_TIME_LIMIT_SECONDS = 7 * 24 * 3600


def _float_setting(name: str, default: float) -> float:
    value = getattr(settings, name, None) or os.environ.get(name)
    return float(value) if value else default


# Failures a restart meets again, so they stop the job at once with their reason instead of being retried with
# backoff: Spark's refusals of the query itself (SQL that does not parse, names that do not resolve, a plan
# streaming cannot run), the job's own checks and bad options (a schema naming columns the source lacks); and
# what the cluster answers the same way until someone changes it: a topic that does not exist, an authorization
# or authentication refusal. A data source's error comes wrapped in an AnalysisException ([PYTHON_DATA_SOURCE…]):
# that alone says nothing, its cause decides. Anything else (a broker unreachable, a timeout, an executor lost)
# is transient and retried.
_PERMANENT_KIND = re.compile(
    r"^(ParseException|AnalysisException|InvalidOptions|ValueError|IllegalArgumentException)\b"
    r"(?!: \[PYTHON_DATA_SOURCE)"
)
_PERMANENT_CLUSTER_ANSWER = re.compile(
    r"^(TopicReadError|ProduceFailed|KafkaException|KafkaError)\b.*("
    r"unknown (target )?topic|UNKNOWN_TOPIC|[Uu]nknown topic or partition|"
    r"authorization failed|AUTHORIZATION_FAILED|[Aa]uthentication failed|AUTHENTICATION)"
)


def is_deterministic_failure(reason: str) -> bool:
    """Whether a driver's failure (launcher.failure_reason) would recur on every restart."""
    return bool(_PERMANENT_KIND.match(reason) or _PERMANENT_CLUSTER_ANSWER.match(reason))


def backoff_seconds(consecutive_failures: int) -> float:
    """The wait before the next start after `consecutive_failures` failures in a row (1 → the base)."""
    base = _float_setting("STREAMING_RESTART_BACKOFF_SECONDS", 2.0)
    most = _float_setting("STREAMING_RESTART_BACKOFF_MAX_SECONDS", 300.0)
    return min(most, base * 2 ** max(0, consecutive_failures - 1))


def max_consecutive_failures() -> int:
    return int(_float_setting("STREAMING_MAX_CONSECUTIVE_FAILURES", 10))


def streams_root() -> Path:
    configured = getattr(settings, "STREAMING_CHECKPOINT_DIR", None) or os.environ.get(
        "STREAMING_CHECKPOINT_DIR"
    )
    return Path(configured) if configured else Path(settings.DATA_DIR) / "streaming"


def stream_directory(stream: StreamingJob) -> Path:
    """The stream's own directory: `checkpoint/` (Spark's checkpoint and the topic sink's state), `driver/`
    (its log and progress) and `output/` (files a file sink writes)."""
    return streams_root() / str(stream.pk)


def _change(action: str, stream: StreamingJob) -> Change:
    return Change(
        action=action,
        resource_type="streaming_job",
        organization_id=stream.team.organization_id,
        team_id=stream.team_id,
        team_name=stream.team.name,
        extra={"job": stream.job, "cluster": stream.cluster.name, "compute_target": stream.compute_target},
    )


def check_stream_create(
    *,
    actor: Actor,
    team: Team,
    cluster: Cluster,
    name: str,
    job: str,
    parameters: dict[str, Any],
    service_account: ServiceAccount | None,
    password: str,
    compute_target: str,
) -> None:
    """create_stream's checks, without writing: rights, compute target, name, parameters, topics."""
    require_launch(actor, team, cluster, service_account, password)
    if not compute_target.startswith(("local", "spark://", "k8s://", "yarn")):
        # Spark Connect runs foreachBatch on the server, where the sink's state would not be ours.
        raise ServiceError(
            f"Streaming jobs run on local[N], spark://, k8s:// or yarn, not {compute_target!r}.",
            code="compute_target",
        )
    if StreamingJob.objects.filter(team=team, name=name).exists():
        raise Conflict("The team already has a streaming job of that name.", code="name_taken")
    checked = validate_parameters(job, parameters)
    _require_topic_access(team, cluster, service_account, parameters)
    require_source_topics_exist(cluster, parameters)
    check_transform(job, checked)


def create_stream(
    *,
    actor: Actor,
    team: Team,
    cluster: Cluster,
    name: str,
    job: str,
    parameters: dict[str, Any],
    service_account: ServiceAccount | None = None,
    password: str = "",
    compute_target: str | None = None,
) -> StreamingJob:
    """Records a streaming job and starts it; it reads and writes as `service_account` with `password`."""
    target = compute_target or default_compute_target()
    stream = StreamingJob(
        team=team,
        cluster=cluster,
        service_account=service_account,
        name=name,
        job=job,
        parameters=parameters,
        compute_target=target,
        credential_encrypted=encrypt_secret(password),
        created_by=actor.user,
    )
    change = _change("streaming_job.create", stream)
    with audited_change(actor=actor, change=change):
        check_stream_create(
            actor=actor,
            team=team,
            cluster=cluster,
            name=name,
            job=job,
            parameters=parameters,
            service_account=service_account,
            password=password,
            compute_target=target,
        )
        stream.save()
        change.on(stream)
        change.after = {
            "job": job,
            "parameters": parameters,
            "service_account": getattr(service_account, "name", None),
        }
    transaction.on_commit(lambda: enqueue_supervisor(stream.pk))
    return stream


def enqueue_supervisor(stream_id: int) -> None:
    """Sent by name (`tasks.supervise_stream`): the Celery entry points import streams, never back."""
    # Expiring: while every worker thread is busy, the watchdog's repeated requests must not pile up (it asks
    # again for a stream still without a supervisor, and a supervisor that finds one alive ends at once).
    current_app.send_task(
        "jobs.supervise_stream",
        args=[stream_id],
        queue=STREAMS_QUEUE,
        expires=2 * SUPERVISOR_STALE_SECONDS,
        ignore_result=True,
    )


def _supervised(stream: StreamingJob) -> bool:
    beat = stream.supervisor_heartbeat_at
    return beat is not None and timezone.now() - beat < timedelta(seconds=SUPERVISOR_STALE_SECONDS)


def start_stream(*, actor: Actor, stream: StreamingJob, password: str = "") -> StreamingJob:
    """Starts a stopped (or failed) stream from its checkpoint; the password again when the cluster needs one."""
    change = _change("streaming_job.start", stream)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, stream.team, TeamRole.DEVELOPER)
        change.on(stream)
        locked = StreamingJob.objects.select_for_update().get(pk=stream.pk)
        if locked.desired_state == DesiredState.RUNNING and locked.state != StreamState.FAILED:
            raise Conflict("The streaming job is already running.", code="running")
        if password:
            locked.credential_encrypted = encrypt_secret(password)
        elif locked.cluster.security_protocol.startswith("SASL") and not locked.credential_encrypted:
            require_credentials(locked.cluster, locked.service_account, "")
        locked.desired_state, locked.state, locked.reason = DesiredState.RUNNING, StreamState.STARTING, ""
        locked.consecutive_failures, locked.next_restart_at, locked.restart_requested = 0, None, False
        locked.save()
    transaction.on_commit(lambda: enqueue_supervisor(locked.pk))
    return locked


def stop_stream(*, actor: Actor, stream: StreamingJob) -> StreamingJob:
    """Asks the supervisor to stop the driver; a stream without a live supervisor is stopped at once."""
    change = _change("streaming_job.stop", stream)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, stream.team, TeamRole.DEVELOPER)
        change.on(stream)
        locked = StreamingJob.objects.select_for_update().get(pk=stream.pk)
        if locked.desired_state == DesiredState.STOPPED:
            raise Conflict("The streaming job is already stopped.", code="stopped")
        locked.desired_state = DesiredState.STOPPED
        if _supervised(locked):
            locked.state = StreamState.STOPPING
            locked.save(update_fields=["desired_state", "state"])
        else:
            if locked.process_group:
                launcher.stop_session(locked.process_group, grace_seconds=5)
            _mark_stopped(locked, "Stopped.")
    return locked


def restart_stream(*, actor: Actor, stream: StreamingJob, password: str = "") -> StreamingJob:
    """Stops the driver and starts it again from the checkpoint (a stopped stream is simply started)."""
    if stream.desired_state != DesiredState.RUNNING or stream.state == StreamState.FAILED:
        return start_stream(actor=actor, stream=stream, password=password)
    change = _change("streaming_job.restart", stream)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, stream.team, TeamRole.DEVELOPER)
        change.on(stream)
        locked = StreamingJob.objects.select_for_update().get(pk=stream.pk)
        locked.restart_requested = True
        if password:
            locked.credential_encrypted = encrypt_secret(password)
        locked.save(update_fields=["restart_requested", "credential_encrypted"])
    if not _supervised(locked):
        transaction.on_commit(lambda: enqueue_supervisor(locked.pk))
    return locked


def _mark_stopped(stream: StreamingJob, reason: str, state: str = StreamState.STOPPED) -> None:
    stream.state, stream.reason = state, reason
    stream.stopped_at = timezone.now()
    stream.credential_encrypted = ""  # only kept while the stream should run
    stream.process_group = None
    stream.next_restart_at = None
    stream.supervisor_token = ""
    stream.supervisor_heartbeat_at = None
    stream.save()


def streams_to_rescue() -> list[int]:
    """Streams that should run but have no live supervisor (its worker died, or it was never picked up)."""
    stale = timezone.now() - timedelta(seconds=SUPERVISOR_STALE_SECONDS)
    candidates = StreamingJob.objects.filter(desired_state=DesiredState.RUNNING).exclude(
        state=StreamState.FAILED
    )
    return [
        s.pk
        for s in candidates.only("pk", "supervisor_heartbeat_at", "created_at")
        if (s.supervisor_heartbeat_at or s.created_at) < stale
    ]


def sink_grants(stream: StreamingJob) -> list[Acl]:
    """What the topic sink's transactions need beyond the topics (streaming.py): WRITE and DESCRIBE on the
    stream's transactional id, READ on its marker group of the same name. None without a service account
    (a cluster without authentication) or for jobs without a topic sink."""
    if stream.service_account is None or stream.job not in TOPIC_SINK_JOBS:
        return []
    name = streaming.stream_transactional_id(str(stream.pk))
    principal = stream.service_account.principal
    return [
        Acl("TRANSACTIONAL_ID", name, "LITERAL", principal, "*", "WRITE", "ALLOW"),
        Acl("TRANSACTIONAL_ID", name, "LITERAL", principal, "*", "DESCRIBE", "ALLOW"),
        Acl("GROUP", name, "LITERAL", principal, "*", "READ", "ALLOW"),
    ]


def provision_sink_grants(stream: StreamingJob) -> None:
    """Creates the sink's grants that the control plane does not manage yet, as managed bindings of the
    stream's team (so the reconciler keeps them), audited as the system's. A cluster that cannot take them now
    (unreachable, no authorizer) is logged: the driver then fails on the broker's refusal and is restarted."""
    missing = [
        acl
        for acl in sink_grants(stream)
        if not AclBinding.objects.filter(
            cluster=stream.cluster, managed=True, **AclBinding.fields_of(acl)
        ).exists()
    ]
    if not missing:
        return
    try:
        create_acls(connection_for(stream.cluster), missing)
    except KafkaGatewayError as error:
        logger.warning("streaming job %s: the sink's ACLs were not created: %s", stream.pk, error)
        return
    for acl in missing:
        change = Change(
            action="acl.create",
            resource_type="acl_binding",
            organization_id=stream.team.organization_id,
            team_id=stream.team_id,
            team_name=stream.team.name,
            resource_name=str(acl)[:255],
            after=AclBinding.fields_of(acl),
            extra={"streaming_job": stream.pk},
        )
        with audited_change(actor=Actor.system(), change=change):
            binding = AclBinding.objects.create(
                cluster=stream.cluster,
                team=stream.team,
                managed=True,
                exists_on_cluster=True,
                **AclBinding.fields_of(acl),
            )
            AclBinding.objects.filter(
                cluster=stream.cluster, managed=False, **AclBinding.fields_of(acl)
            ).delete()
            change.on(binding)


# --- the supervisor --------------------------------------------------------------------------------------


class Supervisor:
    """Keeps one stream running while it should (see the module's docstring); one instance per task."""

    def __init__(self, stream_id: int) -> None:
        self.stream_id = stream_id
        self.token = uuid.uuid4().hex
        self.last_heartbeat = 0.0
        self.last_lag = 0.0
        self.committed_batch: int | None = None  # the batch whose offsets the stream's group holds
        self.log_start = 0  # where the current driver's lines start in the stream's log

    def claim(self) -> StreamingJob | None:
        with transaction.atomic():
            stream = (
                StreamingJob.objects.select_for_update(of=("self",))
                .select_related("cluster", "team", "service_account")
                .filter(pk=self.stream_id)
                .first()
            )
            if (
                stream is None
                or stream.desired_state != DesiredState.RUNNING
                or stream.state == StreamState.FAILED
            ):
                return None
            if _supervised(stream) and stream.supervisor_token:
                return None  # another supervisor is alive
            stream.supervisor_token, stream.supervisor_heartbeat_at = self.token, timezone.now()
            stream.save(update_fields=["supervisor_token", "supervisor_heartbeat_at"])
        self.last_heartbeat = time.monotonic()
        return stream

    def run(self) -> str:
        stream = self.claim()
        if stream is None:
            return "not claimed"
        if stream.process_group and launcher.session_processes(stream.process_group):
            # Left by a supervisor that died: stop it, the stream goes on from its checkpoint.
            launcher.stop_session(stream.process_group)
        while True:
            if stream.next_restart_at is not None and not self._wait_until(stream, stream.next_restart_at):
                return self._stopped(stream)
            outcome = self._run_driver(stream)
            if outcome in ("stopped", "lost"):
                return outcome

    def _owned(self, stream: StreamingJob) -> bool:
        """Refreshes the fields others write; False when another supervisor has taken the stream over."""
        stream.refresh_from_db(fields=["desired_state", "restart_requested", "supervisor_token"])
        return stream.supervisor_token == self.token

    def _heartbeat(self, stream: StreamingJob) -> None:
        if time.monotonic() - self.last_heartbeat >= HEARTBEAT_SECONDS:
            stream.supervisor_heartbeat_at = timezone.now()
            StreamingJob.objects.filter(pk=stream.pk, supervisor_token=self.token).update(
                supervisor_heartbeat_at=stream.supervisor_heartbeat_at
            )
            self.last_heartbeat = time.monotonic()

    def _wait_until(self, stream: StreamingJob, moment: Any) -> bool:
        """Waits out a backoff; False when the stream was stopped (or taken over) meanwhile."""
        while timezone.now() < moment:
            self._heartbeat(stream)
            if not self._owned(stream) or stream.desired_state != DesiredState.RUNNING:
                return False
            if stream.restart_requested:
                break
            time.sleep(WATCH_INTERVAL_SECONDS)
        return True

    def _stopped(self, stream: StreamingJob) -> str:
        if stream.supervisor_token != self.token:
            return "lost"
        _mark_stopped(stream, "Stopped.")
        return "stopped"

    def _run_driver(self, stream: StreamingJob) -> str:
        directory = stream_directory(stream)
        driver_dir = directory / "driver"
        provision_sink_grants(stream)
        secrets_dir = Path(tempfile.mkdtemp(prefix=f"stream-{stream.pk}-"))
        try:
            connection_file = launcher.write_connection_file(secrets_dir, kafka_config_for(stream))
            parameters, resources = split_resources(stream.parameters)
            compute = cluster_settings()
            (driver_dir / streaming.STREAM_PROGRESS_FILE).unlink(missing_ok=True)
            log = driver_dir / launcher.LOG_FILE
            self.log_start = log.stat().st_size if log.exists() else 0
            spark = launcher.start(
                job=stream.job,
                parameters=parameters,
                output_dir=driver_dir,
                compute_target=stream.compute_target,
                connection_file=connection_file,
                shipment=launcher.prepare_shipment(stream.compute_target, compute),
                resources=resources,
                settings=compute,
                extra_arguments=[
                    "--checkpoint-dir", str(directory / "checkpoint"),
                    "--stream-id", str(stream.pk),
                    "--stream-output-dir", str(directory / "output"),
                ],
            )  # fmt: skip
        except OSError as error:
            shutil.rmtree(secrets_dir, ignore_errors=True)
            return self._failed(stream, f"Could not start spark-submit: {error}", ran_a_batch=False)
        try:
            stream.state, stream.started_at, stream.process_group = (
                StreamState.STARTING,
                timezone.now(),
                spark.session_id,
            )
            stream.restart_requested, stream.next_restart_at, stream.reason = False, None, ""
            stream.save(
                update_fields=[
                    "state",
                    "started_at",
                    "process_group",
                    "restart_requested",
                    "next_restart_at",
                    "reason",
                ]
            )
            return self._watch(stream, spark, compute)
        finally:
            shutil.rmtree(secrets_dir, ignore_errors=True)

    def _watch(
        self, stream: StreamingJob, spark: launcher.SparkProcess, compute: launcher.ClusterSettings
    ) -> str:
        first_batch: int | None = None
        ran_a_batch = False
        while True:
            self._heartbeat(stream)
            if not self._owned(stream):
                launcher.cancel(spark, compute)
                return "lost"
            return_code = spark.process.poll()
            progress = streaming.read_progress(spark.output_dir)
            if progress and progress != stream.progress:
                stream.progress = progress
                batch = progress.get("batch_id")
                first_batch = batch if first_batch is None else first_batch
                # Reports come after a batch: a later batch id than the first report means one completed.
                ran_a_batch = ran_a_batch or (batch is not None and batch > first_batch)
                update = ["progress"]
                if stream.state != StreamState.RUNNING:
                    stream.state = StreamState.RUNNING
                    update.append("state")
                if ran_a_batch and stream.consecutive_failures:
                    stream.consecutive_failures = 0
                    update.append("consecutive_failures")
                stream.save(update_fields=update)
            if time.monotonic() - self.last_lag >= LAG_INTERVAL_SECONDS:
                self.record_lag(stream)
            if return_code is not None:
                launcher.stop_session(spark.session_id, grace_seconds=2)  # what the driver left behind
                reason = launcher.failure_reason(spark.log_path, return_code, since=self.log_start)
                return self._failed(stream, reason, ran_a_batch)
            if stream.desired_state != DesiredState.RUNNING:
                launcher.cancel(spark, compute)
                self.record_lag(stream)
                return self._stopped(stream)
            if stream.restart_requested:
                launcher.cancel(spark, compute)
                self._record_restart(stream, "Restart requested.", 0.0, requested=True)
                stream.restart_requested = False
                stream.save(update_fields=["restart_requested"])
                return "restart"
            time.sleep(WATCH_INTERVAL_SECONDS)

    def _failed(self, stream: StreamingJob, reason: str, ran_a_batch: bool) -> str:
        if is_deterministic_failure(reason):
            # It fails the same way on every start (also after batches ran: a topic deleted, a grant revoked):
            # retrying only hides the reason for minutes. Start it again once the cause is fixed.
            _mark_stopped(
                stream,
                f"Stopped, not retried: a restart would fail the same way. {reason}",
                StreamState.FAILED,
            )
            logger.info("streaming job %s failed deterministically (%s); not restarted", stream.pk, reason)
            return "stopped"
        failures = 1 if ran_a_batch else stream.consecutive_failures + 1
        stream.consecutive_failures = failures
        if failures > max_consecutive_failures():
            _mark_stopped(
                stream,
                f"Gave up after {failures - 1} restarts in a row. Last failure: {reason}",
                StreamState.FAILED,
            )
            return "stopped"
        delay = backoff_seconds(failures)
        self._record_restart(stream, reason, delay)
        stream.state, stream.reason = StreamState.RESTARTING, reason
        stream.next_restart_at = timezone.now() + timedelta(seconds=delay)
        stream.process_group = None
        stream.save(
            update_fields=["consecutive_failures", "state", "reason", "next_restart_at", "process_group"]
        )
        logger.info("streaming job %s failed (%s); restarting in %.1f s", stream.pk, reason, delay)
        return "restart"

    def _record_restart(
        self, stream: StreamingJob, reason: str, delay: float, requested: bool = False
    ) -> None:
        entry = {
            "at": timezone.now().isoformat(),
            "reason": reason[:500],
            "delay_seconds": delay,
            "requested": requested,
        }
        stream.restarts = [*stream.restarts, entry][-RESTARTS_KEPT:]
        stream.restart_count += 1
        stream.save(update_fields=["restarts", "restart_count"])

    def record_lag(self, stream: StreamingJob) -> None:
        self.last_lag = time.monotonic()
        kafka_config = {key: str(value) for key, value in kafka_config_for(stream).items()}
        try:
            stream.lag = measure_lag(stream, kafka_config)
        except (TopicReadError, OSError) as error:
            logger.info("streaming job %s: lag not measured: %s", stream.pk, error)
            return
        stream.save(update_fields=["lag"])
        committed = {
            (p["topic"], p["partition"]): p["committed_offset"]
            for p in stream.lag["partitions"]
            if p["committed_offset"] is not None
        }
        # A transactional sink commits the positions itself, with each batch, into the group lag_group names:
        # a commit from here would overwrite its marker.
        if committed and mirrors_positions(stream) and stream.lag["batch_id"] != self.committed_batch:
            try:
                streaming.commit_group_offsets(kafka_config, lag_group(stream), committed)
                self.committed_batch = stream.lag["batch_id"]
            except TopicReadError as error:
                logger.info("streaming job %s: offsets not committed for the lag pages: %s", stream.pk, error)


def mirrors_positions(stream: StreamingJob) -> bool:
    """Whether the supervisor commits the stream's positions to a group for the lag features: for jobs without a
    topic sink, and topic sinks on the idempotent path. A transactional sink commits them itself, with each
    batch (its mode is known from its first report; nothing is committed before that)."""
    if stream.job not in TOPIC_SINK_JOBS:
        return True
    return (stream.progress.get("sink") or {}).get("mode") == streaming.IDEMPOTENT


def lag_group(stream: StreamingJob) -> str:
    """The consumer group holding the stream's committed positions, so the lag pages, history and alerts cover
    the stream: the group the supervisor mirrors them to (the `spark-` prefix its reads already need a group
    ACL for), else the transactional sink's marker group."""
    if mirrors_positions(stream):
        return f"spark-stream-{stream.pk}"
    return streaming.stream_transactional_id(str(stream.pk))


def measure_lag(stream: StreamingJob, kafka_config: dict[str, str]) -> dict[str, Any]:
    """The stream's committed position per partition (the end offsets of the last batch Spark committed, from
    its checkpoint) against each partition's log end; before the first commit, nothing is committed."""
    source_topic = (stream.parameters.get("source") or {}).get("topic")
    committed = streaming.committed_offsets(stream_directory(stream) / "checkpoint" / "spark")
    batch, positions = committed if committed else (None, {})
    consumer = planning_consumer(kafka_config)
    try:
        metadata = consumer.list_topics(source_topic, timeout=10)
        described = metadata.topics.get(source_topic)
        if described is None or described.error is not None:
            raise TopicReadError(f"cannot describe {source_topic}")
        marks = watermarks(consumer, [(source_topic, p) for p in sorted(described.partitions)])
    finally:
        consumer.close()
    partitions = []
    for (topic, partition), (low, high) in sorted(marks.items()):
        position = positions.get((topic, partition))
        behind_from = position if position is not None else low
        partitions.append(
            {
                "topic": topic,
                "partition": partition,
                "committed_offset": position,
                "log_start_offset": low,
                "log_end_offset": high,
                "lag_messages": max(0, high - behind_from),
            }
        )
    return {
        "sampled_at": timezone.now().isoformat(),
        "group": lag_group(stream),
        "batch_id": batch,
        "total_lag": sum(p["lag_messages"] for p in partitions),
        "partitions": partitions,
    }


def stream_log(stream: StreamingJob, lines: int = 200, source: str = "job") -> list[str]:
    return launcher.log_tail(stream_directory(stream) / "driver", lines, source)
