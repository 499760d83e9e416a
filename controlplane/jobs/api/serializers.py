"""Input validators (…InputSerializer) and output shapes (…Serializer) of the jobs API.

The service account's password is write-only: it is kept encrypted only while the run runs, never shown.
"""

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from controlplane.accounts.models import ServiceAccount
from controlplane.clusters.models import Cluster
from controlplane.core.api.fields import VisibleOrganizationField, VisiblePrimaryKeyField
from controlplane.jobs.choices import JobName
from controlplane.jobs.models import JobRun
from controlplane.jobs.services import MAX_TIME_LIMIT_SECONDS
from controlplane.tenancy.models import Team


class ClusterOfVisibleOrganizationField(VisibleOrganizationField):
    """A cluster of one of the caller's organizations (clusters belong to organizations, not teams)."""

    def get_queryset(self) -> QuerySet:
        from controlplane.tenancy.access import visible_organization_ids

        view = self.context.get("view")
        if view is None or getattr(view, "swagger_fake_view", False):
            return Cluster.objects.none()
        return Cluster.objects.filter(organization_id__in=visible_organization_ids(view.actor))


class JobRunLaunchInputSerializer(serializers.Serializer):
    team = VisiblePrimaryKeyField(queryset=Team.objects.all(), team_path="")
    cluster = ClusterOfVisibleOrganizationField(queryset=Cluster.objects.all())
    job = serializers.ChoiceField(choices=JobName.choices)
    parameters = serializers.JSONField(help_text="The job's parameters (see /job-runs/catalog/).")
    service_account = VisiblePrimaryKeyField(
        queryset=ServiceAccount.objects.all(), team_path="team", required=False, allow_null=True, default=None
    )
    password = serializers.CharField(
        max_length=1000, default="", allow_blank=True, write_only=True, style={"input_type": "password"},
        help_text="The service account's SCRAM password on the cluster; used for this run only.",
    )  # fmt: skip
    compute_target = serializers.CharField(
        max_length=500,
        required=False,
        help_text="local[N], spark://…, k8s://… or sc://…; default SPARK_MASTER.",
    )
    time_limit_seconds = serializers.IntegerField(
        min_value=10, max_value=MAX_TIME_LIMIT_SECONDS, default=1800
    )

    def validate_parameters(self, value: object) -> object:
        if not isinstance(value, dict):
            raise serializers.ValidationError("Parameters must be a JSON object.")
        return value


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


class CatalogEntrySerializer(serializers.Serializer):
    job = serializers.CharField()
    description = serializers.CharField()
    parameters = serializers.DictField(child=serializers.CharField())
