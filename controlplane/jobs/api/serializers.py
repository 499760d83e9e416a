"""Input validators (…InputSerializer) and output shapes (…Serializer) of the jobs API.

The service account's password is write-only: it is kept encrypted only while the run runs, never shown.
"""

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from controlplane.accounts.models import ServiceAccount
from controlplane.clusters.models import Cluster
from controlplane.jobs.choices import JobName, StreamingJobName
from controlplane.jobs.launcher import LOG_SOURCES
from controlplane.jobs.models import JobRun, StreamingJob
from controlplane.jobs.services import MAX_TIME_LIMIT_SECONDS
from controlplane.tenancy.api.fields import VisibleOrganizationField, VisiblePrimaryKeyField
from controlplane.tenancy.models import Team


@extend_schema_field({"type": "object", "additionalProperties": True})
class JobParametersField(serializers.JSONField):
    """A JSON object of the job's parameters: documented as one, so a list or a number is refused as invalid."""


class ClusterOfVisibleOrganizationField(VisibleOrganizationField):
    """A cluster of one of the caller's organizations (clusters belong to organizations, not teams)."""

    def get_queryset(self) -> QuerySet:
        from controlplane.tenancy.access import visible_organization_ids

        view = self.context.get("view")
        if view is None or getattr(view, "swagger_fake_view", False):
            return Cluster.objects.none()
        return Cluster.objects.filter(organization_id__in=visible_organization_ids(view.actor))


def _password_field(help_text: str) -> serializers.CharField:
    return serializers.CharField(
        max_length=1000, default="", allow_blank=True, write_only=True, style={"input_type": "password"},
        help_text=help_text,
    )  # fmt: skip


class SparkLaunchInputSerializer(serializers.Serializer):
    """What a job run and a streaming job are both launched with."""

    team = VisiblePrimaryKeyField(queryset=Team.objects.all(), team_path="")
    cluster = ClusterOfVisibleOrganizationField(queryset=Cluster.objects.all())
    parameters = JobParametersField(help_text="The job's parameters (see the catalog action).")
    service_account = VisiblePrimaryKeyField(
        queryset=ServiceAccount.objects.all(), team_path="team", required=False, allow_null=True, default=None
    )

    def validate_parameters(self, value: object) -> object:
        if not isinstance(value, dict):
            raise serializers.ValidationError("Parameters must be a JSON object.")
        return value


class JobRunLaunchInputSerializer(SparkLaunchInputSerializer):
    """A run of a catalog job, queued for the Spark worker."""

    job = serializers.ChoiceField(choices=JobName.choices)
    password = _password_field("The service account's SCRAM password on the cluster; used for this run only.")
    compute_target = serializers.CharField(
        max_length=500,
        required=False,
        help_text="local[N], spark://…, k8s://… or sc://…; default SPARK_MASTER.",
    )
    time_limit_seconds = serializers.IntegerField(
        min_value=10, max_value=MAX_TIME_LIMIT_SECONDS, default=1800
    )


class ResultTableSerializer(serializers.Serializer):
    name = serializers.CharField()
    columns = serializers.ListField(child=serializers.CharField())
    rows = serializers.ListField(child=serializers.ListField(child=serializers.JSONField()))


class ChartSeriesSerializer(serializers.Serializer):
    name = serializers.CharField()
    values = serializers.ListField(child=serializers.FloatField(allow_null=True))


class ResultChartSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["bar", "line"])
    x_label = serializers.CharField(allow_blank=True)
    x = serializers.ListField(child=serializers.JSONField(), help_text="Category labels or x values.")
    series = ChartSeriesSerializer(many=True, help_text="One value per x for each series.")


class ResultDocumentSerializer(serializers.Serializer):
    name = serializers.CharField()
    content = serializers.JSONField(help_text="e.g. a suggested JSON Schema or Avro schema.")


class JobResultSerializer(serializers.Serializer):
    """What a finished run produced; empty lists until it succeeds."""

    tables = ResultTableSerializer(many=True)
    charts = ResultChartSerializer(many=True)
    documents = ResultDocumentSerializer(many=True)
    files = serializers.ListField(
        child=serializers.CharField(), help_text="Paths for the download action, relative to the run."
    )
    metrics = serializers.DictField(
        child=serializers.JSONField(), help_text="records_read, duration_seconds, records_per_second, …"
    )


class JobProgressSerializer(serializers.Serializer):
    """From Spark's status API while the run runs; zeros before the driver is up."""

    stages_done = serializers.IntegerField()
    stages_total = serializers.IntegerField()
    tasks_done = serializers.IntegerField()
    tasks_total = serializers.IntegerField()
    records_read = serializers.IntegerField()


EMPTY_PROGRESS = {"stages_done": 0, "stages_total": 0, "tasks_done": 0, "tasks_total": 0, "records_read": 0}
EMPTY_RESULT = {"tables": [], "charts": [], "documents": [], "files": [], "metrics": {}}


class JobRunSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(read_only=True)
    team_name = serializers.CharField(source="team.name", read_only=True)
    cluster_name = serializers.CharField(source="cluster.name", read_only=True)
    service_account_name = serializers.CharField(source="service_account.name", read_only=True, default=None)
    progress_fraction = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    result = serializers.SerializerMethodField()
    duration_seconds = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()

    class Meta:
        model = JobRun
        fields = [
            "id", "url", "team", "team_name", "cluster", "cluster_name", "service_account",
            "service_account_name", "job", "parameters", "compute_target", "time_limit_seconds", "state",
            "reason", "progress", "progress_fraction", "result", "cancel_requested", "created_at",
            "started_at", "finished_at", "duration_seconds",
        ]  # fmt: skip
        read_only_fields = fields

    def get_progress_fraction(self, run: JobRun) -> float:
        """Tasks done of all tasks known so far (Spark plans stages as the job goes, so it can step back)."""
        if run.state == "succeeded":
            return 1.0
        total = run.progress.get("tasks_total", 0)
        return round(run.progress.get("tasks_done", 0) / total, 4) if total else 0.0

    @extend_schema_field(JobProgressSerializer)
    def get_progress(self, run: JobRun) -> dict:
        return {**EMPTY_PROGRESS, **run.progress}

    @extend_schema_field(JobResultSerializer)
    def get_result(self, run: JobRun) -> dict:
        return {**EMPTY_RESULT, **run.result}

    def get_duration_seconds(self, run: JobRun) -> float | None:
        if run.started_at is None:
            return None
        from django.utils import timezone

        return round(((run.finished_at or timezone.now()) - run.started_at).total_seconds(), 3)

    def get_url(self, run: JobRun) -> str:
        return reverse("jobrun-detail", args=[run.pk], request=self.context.get("request"))


class JobLogSerializer(serializers.Serializer):
    lines = serializers.ListField(child=serializers.CharField())


MOST_LOG_LINES = 5000


class LogQuerySerializer(serializers.Serializer):
    lines = serializers.IntegerField(
        min_value=1, default=200, help_text=f"How many of the last lines (at most {MOST_LOG_LINES} are sent)."
    )
    source = serializers.ChoiceField(
        choices=LOG_SOURCES,
        default="job",
        help_text="job (default): the job's own lines (started, rows per batch, what its sink wrote, why it "
        "failed); spark: the driver's whole log, Spark's lines (WARN unless the run asked for more) included.",
    )


class ResultFileQuerySerializer(serializers.Serializer):
    path = serializers.CharField(max_length=4096, help_text="A path listed in the run's result files.")


class CatalogEntrySerializer(serializers.Serializer):
    job = serializers.CharField()
    description = serializers.CharField()
    parameters = serializers.DictField(child=serializers.CharField())
    required = serializers.ListField(
        child=serializers.CharField(),
        help_text="the parameters without a default: every launch must give them",
    )


class StreamingJobCreateInputSerializer(SparkLaunchInputSerializer):
    """A streaming job, started as soon as it is created."""

    name = serializers.SlugField(max_length=100)
    job = serializers.ChoiceField(choices=StreamingJobName.choices)
    password = _password_field(
        "The service account's SCRAM password; kept encrypted while the job should run."
    )
    compute_target = serializers.CharField(
        max_length=500, required=False, help_text="local[N], spark://… or k8s://…; default SPARK_MASTER."
    )


class StreamingJobActionInputSerializer(serializers.Serializer):
    password = _password_field(
        "Start/restart: the service account's password again, once a stop has wiped it."
    )


class StreamSinkSerializer(serializers.Serializer):
    """A topic sink's report: how it writes each micro-batch once (controlplane/spark/streaming.py)."""

    mode = serializers.ChoiceField(
        choices=["transactional", "idempotent"],
        help_text="transactional: one Kafka transaction per batch (exactly-once for read_committed readers); "
        "idempotent: the cluster lacks transactions",
    )
    transactional_id = serializers.CharField(required=False)
    last_committed_batch = serializers.IntegerField(required=False)
    batches_skipped = serializers.IntegerField(
        required=False, help_text="batches Spark replayed after a restart that had already been committed"
    )


class StreamProgressSerializer(serializers.Serializer):
    """The latest StreamingQuery.lastProgress, summarized; nulls before the first report."""

    batch_id = serializers.IntegerField(allow_null=True)
    timestamp = serializers.CharField(allow_null=True)
    num_input_rows = serializers.IntegerField()
    input_rows_per_second = serializers.FloatField()
    processed_rows_per_second = serializers.FloatField()
    batch_duration_ms = serializers.IntegerField()
    sink = StreamSinkSerializer(allow_null=True, help_text="null for jobs without a topic sink")


class StreamPartitionLagSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    committed_offset = serializers.IntegerField(allow_null=True, help_text="next offset the stream reads")
    log_start_offset = serializers.IntegerField()
    log_end_offset = serializers.IntegerField()
    lag_messages = serializers.IntegerField()


class StreamLagSerializer(serializers.Serializer):
    """The stream's committed progress (its checkpoint's last committed batch) per partition vs log end."""

    sampled_at = serializers.DateTimeField(allow_null=True)
    group = serializers.CharField(
        allow_null=True,
        help_text="the consumer group holding the committed offsets (lag pages, alerts): a transactional topic "
        "sink's marker group streamhub-stream-<id>, else spark-stream-<id> they are mirrored to",
    )
    batch_id = serializers.IntegerField(allow_null=True, help_text="the last batch Spark committed")
    total_lag = serializers.IntegerField()
    partitions = StreamPartitionLagSerializer(many=True)


class StreamRestartSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    reason = serializers.CharField()
    delay_seconds = serializers.FloatField(help_text="the backoff waited before starting again")
    requested = serializers.BooleanField(help_text="asked for through the API, not after a failure")


EMPTY_STREAM_PROGRESS = {
    "batch_id": None, "timestamp": None, "num_input_rows": 0, "input_rows_per_second": 0.0,
    "processed_rows_per_second": 0.0, "batch_duration_ms": 0, "sink": None,
}  # fmt: skip
EMPTY_LAG = {"sampled_at": None, "group": None, "batch_id": None, "total_lag": 0, "partitions": []}


class StreamingJobSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(read_only=True)
    team_name = serializers.CharField(source="team.name", read_only=True)
    cluster_name = serializers.CharField(source="cluster.name", read_only=True)
    service_account_name = serializers.CharField(source="service_account.name", read_only=True, default=None)
    progress = serializers.SerializerMethodField()
    lag = serializers.SerializerMethodField()
    restarts = StreamRestartSerializer(many=True, read_only=True)

    class Meta:
        model = StreamingJob
        fields = [
            "id", "name", "team", "team_name", "cluster", "cluster_name", "service_account",
            "service_account_name", "job", "parameters", "compute_target", "desired_state", "state", "reason",
            "progress", "lag", "restart_count", "consecutive_failures", "restarts", "next_restart_at",
            "created_at", "started_at", "stopped_at",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(StreamProgressSerializer)
    def get_progress(self, stream: StreamingJob) -> dict:
        return {name: stream.progress.get(name, empty) for name, empty in EMPTY_STREAM_PROGRESS.items()}

    @extend_schema_field(StreamLagSerializer)
    def get_lag(self, stream: StreamingJob) -> dict:
        return {**EMPTY_LAG, **stream.lag}
