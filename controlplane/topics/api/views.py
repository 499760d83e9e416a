from collections.abc import Callable

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.clusters.api.serializers import AcceptedOperationSerializer
from controlplane.clusters.choices import OperationState
from controlplane.clusters.models import Operation
from controlplane.clusters.ownership import visible_rows_q
from controlplane.core.api.query import takes_query
from controlplane.tenancy.api.viewsets import CreateWithServiceMixin, ScopedReadOnlyViewSet
from controlplane.tenancy.choices import TeamRole
from controlplane.topics import browsing, filtersets, services
from controlplane.topics.api import serializers
from controlplane.topics.models import Topic


@extend_schema(tags=["topics"])
class TopicViewSet(CreateWithServiceMixin, ScopedReadOnlyViewSet):
    """Topics of the caller's teams (and, for org admins, unmanaged topics found on their clusters).

    Lists answer from the state the reconciler last observed; a topic's detail asks the cluster.
    """

    queryset = Topic.objects.select_related("cluster", "team")
    serializer_class = serializers.TopicSerializer
    write_role = TeamRole.DEVELOPER
    create_serializer_class = serializers.TopicCreateInputSerializer
    filterset_class = filtersets.TopicFilterSet
    ordering_fields = ["name", "size_bytes", "partitions", "created_at"]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        queryset = queryset.filter(visible_rows_q(self.actor))
        # Lists show totals; the per-partition JSON is for details only and is the bulk of each row.
        return queryset.defer("partition_details") if self.action == "list" else queryset

    def _outcome(self, operation: Operation, done: Callable[[], Response]) -> Response:
        """The change's answer: `done()` when the cluster confirmed it within the request, else 202 with the
        operation that confirms it (poll `operation_url`)."""
        if operation.state == OperationState.SUCCEEDED:
            response = done()
        else:
            body = AcceptedOperationSerializer(
                {"operation": operation}, context=self.get_serializer_context()
            ).data
            response = Response(
                body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["operation_url"]}
            )
        response["X-Operation-ID"] = str(operation.id)
        return response

    def _topic_of(
        self, operation: Operation, status_code: int = status.HTTP_200_OK
    ) -> Callable[[], Response]:
        return lambda: self.respond(Topic.objects.get(pk=operation.parameters["topic_id"]), status_code)

    @extend_schema(
        request=serializers.TopicCreateInputSerializer,
        responses={
            201: serializers.TopicSerializer,
            200: serializers.TopicCreateInputSerializer,
            202: AcceptedOperationSerializer,
        },
    )
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Creates the topic; with `validate_only` the cluster checks the request and nothing is created.
        201: created and confirmed. 202: the cluster did not confirm it in time; the operation settles the
        outcome once the control plane has looked at the cluster."""
        data = self.validated_input(serializers.TopicCreateInputSerializer)
        operation = services.create_topic(actor=self.actor, **data)
        if operation is None:
            return Response({**request.data, "validate_only": True}, status=status.HTTP_200_OK)
        return self._outcome(operation, self._topic_of(operation, status.HTTP_201_CREATED))

    @extend_schema(responses=serializers.TopicDetailSerializer)
    def retrieve(self, request: Request, *args: object, **kwargs: object) -> Response:
        topic = self.get_object()
        live = services.describe_topic(topic=topic)
        context = {**self.get_serializer_context(), "live": live}
        return Response(serializers.TopicDetailSerializer(topic, context=context).data)

    @extend_schema(
        request=serializers.DeleteTopicInputSerializer,
        responses={204: None, 202: AcceptedOperationSerializer},
    )
    def destroy(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Deletes the topic from the cluster; the body must repeat its name. 202 as for create."""
        topic = self.get_object()
        data = self.validated_input(serializers.DeleteTopicInputSerializer, instance=topic)
        operation = services.delete_topic(actor=self.actor, topic=topic, **data)
        return self._outcome(operation, lambda: Response(status=status.HTTP_204_NO_CONTENT))

    @extend_schema(
        request=serializers.TopicConfigsInputSerializer,
        responses={200: serializers.TopicSerializer, 202: AcceptedOperationSerializer},
    )
    @action(detail=True, methods=["patch"], url_path="configs")
    def configs(self, request: Request, pk: str | None = None) -> Response:
        topic = self.get_object()
        data = self.validated_input(serializers.TopicConfigsInputSerializer, instance=topic)
        operation = services.update_topic_configs(actor=self.actor, topic=topic, **data)
        return self._outcome(operation, self._topic_of(operation))

    @extend_schema(
        request=serializers.PartitionsInputSerializer,
        responses={200: serializers.TopicSerializer, 202: AcceptedOperationSerializer},
    )
    @action(detail=True, methods=["post"], url_path="partitions")
    def partitions(self, request: Request, pk: str | None = None) -> Response:
        topic = self.get_object()
        data = self.validated_input(serializers.PartitionsInputSerializer, instance=topic)
        operation = services.add_partitions(actor=self.actor, topic=topic, **data)
        return self._outcome(operation, self._topic_of(operation))

    @extend_schema(request=serializers.PurgeInputSerializer, responses=serializers.PurgedSerializer)
    @action(detail=True, methods=["post"])
    def purge(self, request: Request, pk: str | None = None) -> Response:
        """Deletes records: all of them, or those before an offset in one partition."""
        topic = self.get_object()
        data = self.validated_input(serializers.PurgeInputSerializer, instance=topic)
        starts = services.purge_topic(actor=self.actor, topic=topic, **data)
        return Response({"start_offsets": {str(p): o for p, o in starts.items()}})

    @extend_schema(request=serializers.AdoptInputSerializer, responses=serializers.TopicSerializer)
    @action(detail=True, methods=["post"])
    def adopt(self, request: Request, pk: str | None = None) -> Response:
        """Org admins: make an unmanaged topic a team's managed topic."""
        topic = self.get_object()
        data = self.validated_input(serializers.AdoptInputSerializer)
        return self.respond(services.adopt_topic(actor=self.actor, topic=topic, **data))

    @extend_schema(responses=serializers.BrowseResultSerializer)
    @takes_query(serializers.BrowseInputSerializer)
    # One step of a browse: the browse limit bounds it, so neither pagination nor the list filters apply.
    @action(detail=True, methods=["get"], pagination_class=None, filter_backends=[])
    def messages(self, request: Request, pk: str | None = None) -> Response:
        """Records: the newest across partitions (exactly the latest `limit` by time), from the start, an
        offset or a timestamp, filtered with plain filters or a CEL expression. Scans and live tails answer
        with a `cursor` to pass back for the next step (each request reads for about a second, a tail
        waits up to `wait` seconds for new records), with `progress` and, for a tail, its `lag`."""
        topic = self.get_object()
        query = serializers.BrowseInputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = dict(query.validated_data)
        simple = browsing.SimpleFilter(
            key_contains=data.pop("key_contains"),
            value_contains=data.pop("value_contains"),
            header_key=data.pop("header_key"),
        )
        result = services.browse_messages(
            actor=self.actor,
            topic=topic,
            simple=simple,
            expression=data.pop("filter"),
            wait_seconds=data.pop("wait"),
            **data,
        )
        return Response(serializers.BrowseResultSerializer(result).data)

    @extend_schema(
        request=serializers.ProduceInputSerializer, responses={201: serializers.ProducedSerializer}
    )
    @action(detail=True, methods=["post"])
    def produce(self, request: Request, pk: str | None = None) -> Response:
        """Produces one test message (key, value, headers) to the topic."""
        topic = self.get_object()
        data = self.validated_input(serializers.ProduceInputSerializer, instance=topic)
        produced = services.produce_test_message(actor=self.actor, topic=topic, **data)
        return Response(produced, status=status.HTTP_201_CREATED)
