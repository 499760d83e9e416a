import dataclasses
import importlib

from django.http import FileResponse
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.core.api.query import takes_query
from controlplane.jobs import filtersets, services, streams
from controlplane.jobs.api import serializers
from controlplane.jobs.models import JobRun, StreamingJob
from controlplane.spark.jobs import CATALOG, STREAMING_CATALOG
from controlplane.tenancy.api.viewsets import ScopedReadOnlyViewSet
from controlplane.tenancy.choices import TeamRole


def _log_query(request: Request) -> tuple[int, str]:
    query = serializers.LogQuerySerializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    return min(query.validated_data["lines"], serializers.MOST_LOG_LINES), query.validated_data["source"]


@extend_schema(tags=["jobs"])
class JobRunViewSet(ScopedReadOnlyViewSet):
    """Spark job runs of the caller's teams: launch, watch progress, cancel, read logs and results."""

    write_role = TeamRole.DEVELOPER
    queryset = JobRun.objects.select_related("team", "cluster", "service_account")
    serializer_class = serializers.JobRunSerializer
    filterset_class = filtersets.JobRunFilterSet
    ordering_fields = ["created_at", "state", "job"]

    @extend_schema(
        request=serializers.JobRunLaunchInputSerializer, responses={201: serializers.JobRunSerializer}
    )
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Launches a catalog job; it is queued for the Spark worker and runs as the given service account."""
        data = self.validated_input(serializers.JobRunLaunchInputSerializer)
        run = services.launch_job_run(actor=self.actor, **data)
        return self.respond(run, status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={202: serializers.JobRunSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        """Stops the run: its Spark processes are terminated and it ends as cancelled."""
        run = services.cancel_job_run(actor=self.actor, run=self.get_object())
        return self.respond(run, status.HTTP_202_ACCEPTED)

    @extend_schema(responses=serializers.JobLogSerializer)
    @takes_query(serializers.LogQuerySerializer)
    @action(detail=True, methods=["get"])
    def log(self, request: Request, pk: str | None = None) -> Response:
        """The last lines of the run's log: the job's own, or the driver's with Spark's (`source`)."""
        run = self.get_object()
        return Response({"lines": services.run_log(run, *_log_query(request))})

    @extend_schema(responses={(200, "application/octet-stream"): bytes})
    @takes_query(serializers.ResultFileQuerySerializer)
    @action(detail=True, methods=["get"])
    def download(self, request: Request, pk: str | None = None) -> FileResponse:
        """One result file of the run."""
        query = serializers.ResultFileQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        path = services.result_file(self.get_object(), query.validated_data["path"])
        return FileResponse(path.open("rb"), as_attachment=True, filename=path.name)

    @extend_schema(responses=serializers.CatalogEntrySerializer(many=True))
    @action(detail=False, methods=["get"], pagination_class=None, filter_backends=[])
    def catalog(self, request: Request) -> Response:
        """The jobs that can be launched and their parameters."""
        return Response(_catalog_entries(CATALOG))


def _without_default(field: dataclasses.Field) -> bool:
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING


def _catalog_entries(names: tuple[str, ...]) -> list[dict]:
    entries = []
    for name in names:
        module = importlib.import_module(f"controlplane.spark.jobs.{name}")
        fields = dataclasses.fields(module.Parameters)
        entries.append(
            {
                "job": name,
                "description": (module.__doc__ or "").strip(),
                "parameters": {f.name: str(f.type) for f in fields},
                "required": [f.name for f in fields if _without_default(f)],
            }
        )
    return entries


@extend_schema(tags=["jobs"])
class StreamingJobViewSet(ScopedReadOnlyViewSet):
    """Long-running streaming jobs of the caller's teams: create, start, stop, restart, progress and lag."""

    write_role = TeamRole.DEVELOPER
    queryset = StreamingJob.objects.select_related("team", "cluster", "service_account")
    serializer_class = serializers.StreamingJobSerializer
    filterset_class = filtersets.StreamingJobFilterSet
    ordering_fields = ["created_at", "state", "name"]

    @extend_schema(
        request=serializers.StreamingJobCreateInputSerializer,
        responses={201: serializers.StreamingJobSerializer},
    )
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Creates a streaming job and starts it; its supervisor keeps it running until it is stopped."""
        data = self.validated_input(serializers.StreamingJobCreateInputSerializer)
        return self.respond(streams.create_stream(actor=self.actor, **data), status.HTTP_201_CREATED)

    @extend_schema(
        request=serializers.StreamingJobActionInputSerializer,
        responses={202: serializers.StreamingJobSerializer},
    )
    @action(detail=True, methods=["post"])
    def start(self, request: Request, pk: str | None = None) -> Response:
        """Starts a stopped or failed stream again from its checkpoint."""
        data = self.validated_input(serializers.StreamingJobActionInputSerializer)
        stream = streams.start_stream(actor=self.actor, stream=self.get_object(), **data)
        return self.respond(stream, status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={202: serializers.StreamingJobSerializer})
    @action(detail=True, methods=["post"])
    def stop(self, request: Request, pk: str | None = None) -> Response:
        """Stops the stream's driver; its checkpoint is kept, so a start goes on where it stopped."""
        return self.respond(
            streams.stop_stream(actor=self.actor, stream=self.get_object()), status.HTTP_202_ACCEPTED
        )

    @extend_schema(
        request=serializers.StreamingJobActionInputSerializer,
        responses={202: serializers.StreamingJobSerializer},
    )
    @action(detail=True, methods=["post"])
    def restart(self, request: Request, pk: str | None = None) -> Response:
        """Stops the driver and starts it again from its checkpoint (a stopped stream is started)."""
        data = self.validated_input(serializers.StreamingJobActionInputSerializer)
        stream = streams.restart_stream(actor=self.actor, stream=self.get_object(), **data)
        return self.respond(stream, status.HTTP_202_ACCEPTED)

    @extend_schema(responses=serializers.StreamLagSerializer)
    @action(detail=True, methods=["get"])
    def lag(self, request: Request, pk: str | None = None) -> Response:
        """The stream's consumer lag: its last committed batch's offsets per partition vs each log end."""
        return Response(self.get_serializer(self.get_object()).data["lag"])

    @extend_schema(responses=serializers.JobLogSerializer)
    @takes_query(serializers.LogQuerySerializer)
    @action(detail=True, methods=["get"])
    def log(self, request: Request, pk: str | None = None) -> Response:
        """The last lines of the stream's log across its restarts: the job's own, or the driver's (`source`)."""
        stream = self.get_object()
        return Response({"lines": streams.stream_log(stream, *_log_query(request))})

    @extend_schema(responses=serializers.CatalogEntrySerializer(many=True))
    @action(detail=False, methods=["get"], pagination_class=None, filter_backends=[])
    def catalog(self, request: Request) -> Response:
        """The streaming jobs that can be created and their parameters."""
        return Response(_catalog_entries(STREAMING_CATALOG))
