from datetime import UTC, datetime, timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.clusters import brokers, filtersets, log_ends, membership, outcomes, services, transactions
from controlplane.clusters.api import serializers
from controlplane.clusters.choices import ClusterStatus
from controlplane.clusters.models import Cluster, Operation
from controlplane.clusters.throughput import throughput
from controlplane.core.api.query import takes_query
from controlplane.core.errors import ServiceError
from controlplane.tenancy.access import visible_organization_ids, visible_teams_q
from controlplane.tenancy.api.viewsets import ORG_ADMIN, ScopedReadOnlyViewSet


@extend_schema(tags=["clusters"])
@extend_schema_view(
    retrieve=extend_schema(responses=serializers.ClusterDetailSerializer),
    create=extend_schema(
        request=serializers.ClusterCreateInputSerializer,
        responses={202: serializers.AcceptedOperationSerializer},
    ),
    destroy=extend_schema(
        request=serializers.ClusterDeleteInputSerializer,
        responses={202: serializers.AcceptedOperationSerializer},
    ),
)
class ClusterViewSet(ScopedReadOnlyViewSet):
    """Kafka clusters of the caller's organizations. Org admins create, register and delete them.

    Creating and deleting are long operations: they answer 202 with a link to the operation's progress.
    Deleted clusters are listed with `?status=deleted` only.
    """

    write_role = ORG_ADMIN
    action_roles = {"check_health": None}
    queryset = Cluster.objects.select_related("organization")
    serializer_class = serializers.ClusterSerializer
    filterset_class = filtersets.ClusterFilterSet
    ordering_fields = ["name", "created_at", "status"]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        queryset = queryset.filter(organization_id__in=visible_organization_ids(self.actor))
        if self.action == "list" and self.request.query_params.get("status") != ClusterStatus.DELETED:
            queryset = queryset.exclude(status=ClusterStatus.DELETED)
        return queryset

    def _accepted(self, operation: Operation) -> Response:
        body = serializers.AcceptedOperationSerializer(
            {"operation": operation}, context=self.get_serializer_context()
        ).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["operation_url"]})

    def retrieve(self, request: Request, *args: object, **kwargs: object) -> Response:
        """The cluster with its brokers and each broker's configs as the cluster reports them."""
        cluster = self.get_object()
        configs, error = services.read_broker_configs(cluster=cluster)
        context = {**self.get_serializer_context(), "broker_configs": configs, "configs_error": error}
        return Response(serializers.ClusterDetailSerializer(cluster, context=context).data)

    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Requests a local cluster; provisioning runs in the background."""
        data = self.validated_input(serializers.ClusterCreateInputSerializer)
        operation = services.request_cluster(
            actor=self.actor,
            organization=data.pop("organization"),
            spec=services.ClusterSpec(**data),
        )
        return self._accepted(operation)

    def destroy(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Deletes the cluster: local brokers are stopped and their data removed. Repeat its name."""
        cluster = self.get_object()
        data = self.validated_input(serializers.ClusterDeleteInputSerializer)
        operation = services.request_cluster_deletion(
            actor=self.actor, cluster=cluster, confirm_name=data["confirm_name"]
        )
        return self._accepted(operation)

    @extend_schema(
        request=serializers.ClusterRegisterInputSerializer, responses={201: serializers.ClusterSerializer}
    )
    @action(detail=False, methods=["post"])
    def register(self, request: Request) -> Response:
        """Registers an existing Kafka-compatible cluster; it must answer Metadata with the credentials."""
        data = self.validated_input(serializers.ClusterRegisterInputSerializer)
        cluster = services.register_external_cluster(actor=self.actor, **data)
        return self.respond(cluster, status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={202: serializers.AcceptedOperationSerializer})
    @action(detail=True, methods=["post"], url_path="brokers")
    def add_broker(self, request: Request, pk: str) -> Response:
        """Adds a broker-only node to a replicated local cluster. It holds no replicas until partitions are
        reassigned onto it."""
        return self._accepted(membership.request_broker_addition(actor=self.actor, cluster=self.get_object()))

    @extend_schema(
        request=serializers.BrokerRemoveInputSerializer,
        responses={202: serializers.AcceptedOperationSerializer},
    )
    @action(detail=True, methods=["delete"], url_path=r"brokers/(?P<node_id>[0-9]+)")
    def remove_broker(self, request: Request, pk: str, node_id: str) -> Response:
        """Removes a broker-only node: its replicas move to the others first (409 when they cannot hold
        every partition's replicas, or for a controller voter). Repeat its node id."""
        cluster = self.get_object()
        data = self.validated_input(serializers.BrokerRemoveInputSerializer)
        if data["confirm_node_id"] != int(node_id):
            raise ServiceError("Confirm the removal with the broker's node id.", code="confirmation_mismatch")
        return self._accepted(
            membership.request_broker_removal(actor=self.actor, cluster=cluster, node_id=int(node_id))
        )

    @extend_schema(
        request=serializers.BrokerRemoveInputSerializer,
        responses={202: serializers.AcceptedOperationSerializer},
    )
    @action(detail=True, methods=["post"], url_path=r"brokers/(?P<node_id>[0-9]+)/replace-controller")
    def replace_controller(self, request: Request, pk: str, node_id: str) -> Response:
        """Replaces a controller node of a cluster with a dynamic quorum: a new broker+controller node
        becomes a voter (AddRaftVoter), the old one's replicas move off it, it leaves the quorum
        (RemoveRaftVoter) and is removed (409 for a static quorum). Repeat its node id."""
        cluster = self.get_object()
        data = self.validated_input(serializers.BrokerRemoveInputSerializer)
        if data["confirm_node_id"] != int(node_id):
            raise ServiceError("Confirm the replacement with the node's id.", code="confirmation_mismatch")
        return self._accepted(
            membership.request_controller_replacement(actor=self.actor, cluster=cluster, node_id=int(node_id))
        )

    @extend_schema(responses=serializers.BrokerDetailSerializer)
    @remove_broker.mapping.get
    def broker(self, request: Request, pk: str, node_id: str) -> Response:
        """One broker: the replicas it hosts and leads, those out of sync, its log dirs (DescribeLogDirs),
        its controller role and the messages per second it takes in as leader."""
        view = brokers.describe_broker(cluster=self.get_object(), node_id=int(node_id))
        return Response(serializers.BrokerDetailSerializer(view).data)

    @extend_schema(
        request=serializers.BrokerConfigsInputSerializer, responses=serializers.BrokerConfigsSerializer
    )
    @action(detail=True, methods=["patch"], url_path=r"brokers/(?P<node_id>[0-9]+)/configs")
    def broker_configs(self, request: Request, pk: str, node_id: str) -> Response:
        """Org admins: sets a broker's dynamic configs (IncrementalAlterConfigs); answers its configs as
        read back. Configs the broker reports read-only are refused with nothing sent."""
        data = self.validated_input(serializers.BrokerConfigsInputSerializer)
        configs = brokers.update_broker_configs(
            actor=self.actor, cluster=self.get_object(), node_id=int(node_id), configs=data["configs"]
        )
        return Response(serializers.BrokerConfigsSerializer({"configs": configs}).data)

    @extend_schema(responses=serializers.ReassignmentsSerializer)
    @action(detail=True, methods=["get"])
    def reassignments(self, request: Request, pk: str) -> Response:
        """Ongoing partition reassignments with each adding replica's bytes against the leader's."""
        view = membership.describe_reassignments(cluster=self.get_object())
        return Response(serializers.ReassignmentsSerializer(view).data)

    @extend_schema(
        request=serializers.ReassignmentInputSerializer,
        responses={202: serializers.ReassignmentStartedSerializer},
    )
    @reassignments.mapping.post
    def start_reassignment(self, request: Request, pk: str) -> Response:
        """Moves partitions of a topic to target replicas, or one replica of each onto a broker. The cluster
        copies in the background; GET shows the progress."""
        cluster = self.get_object()
        data = self.validated_input(serializers.ReassignmentInputSerializer)
        targets = membership.reassign_partitions(actor=self.actor, cluster=cluster, **data)
        body = {
            "requested": [
                {"topic": topic, "partition": partition, "replicas": replicas}
                for (topic, partition), replicas in sorted(targets.items())
            ]
        }
        return Response(serializers.ReassignmentStartedSerializer(body).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        request=serializers.ClusterGuardrailsInputSerializer, responses=serializers.ClusterSerializer
    )
    @action(detail=True, methods=["patch"], url_path="guardrails")
    def guardrails(self, request: Request, pk: str) -> Response:
        """Org admins: the cluster's partition budget (partition replicas per broker)."""
        cluster = self.get_object()
        data = self.validated_input(serializers.ClusterGuardrailsInputSerializer)
        return self.respond(services.set_cluster_guardrails(actor=self.actor, cluster=cluster, **data))

    @extend_schema(
        request=serializers.BrokerConfigChangeInputSerializer,
        responses={202: serializers.AcceptedOperationSerializer},
    )
    @action(detail=True, methods=["patch"], url_path="broker-config")
    def broker_config(self, request: Request, pk: str) -> Response:
        """Org admins: new broker config overrides for every node of a local cluster, applied by restarting
        the nodes one at a time (each back in sync before the next)."""
        cluster = self.get_object()
        data = self.validated_input(serializers.BrokerConfigChangeInputSerializer)
        return self._accepted(
            services.request_broker_config_change(
                actor=self.actor, cluster=cluster, broker_config=data["broker_config"]
            )
        )

    @extend_schema(responses=serializers.EngineSerializer(many=True))
    @action(detail=False, methods=["get"], pagination_class=None, filter_backends=[])
    def engines(self, request: Request) -> Response:
        """The engines a new cluster may run, with the installed versions of each."""
        return Response(serializers.EngineSerializer(services.available_engines(), many=True).data)

    @extend_schema(request=None, responses=serializers.ClusterSerializer)
    @action(detail=True, methods=["post"], url_path="check-health")
    def check_health(self, request: Request, pk: str) -> Response:
        """Observes the cluster now (brokers up, controller, offline partitions) instead of waiting for beat."""
        return self.respond(services.check_cluster_health(cluster=self.get_object()))

    @extend_schema(responses=serializers.ThroughputSerializer)
    @takes_query(serializers.ThroughputQuerySerializer)
    @action(detail=True, methods=["get"])
    def throughput(self, request: Request, pk: str) -> Response:
        """Messages per second, in total and per topic, from the lag sampler's log-end offsets (last hour)."""
        cluster = self.get_object()
        query = serializers.ThroughputQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        until = query.validated_data.get("until") or timezone.now()
        since = query.validated_data.get("since") or until - timedelta(hours=1)
        ends = log_ends.log_end_history(log_ends.history_redis(), cluster.id, since=since.timestamp())
        rates = throughput(ends)
        keep = [index for index, time in enumerate(rates.times) if time <= until.timestamp()]
        body = {
            "cluster": cluster.id,
            "times": [datetime.fromtimestamp(rates.times[index], tz=UTC) for index in keep],
            "messages_per_second": [rates.messages_per_second[index] for index in keep],
            "by_topic": [
                {"topic": topic.topic, "messages_per_second": [topic.messages_per_second[i] for i in keep]}
                for topic in rates.by_topic
            ],
        }
        return Response(serializers.ThroughputSerializer(body).data)

    @extend_schema(responses=serializers.OpenTransactionSerializer(many=True))
    @takes_query(serializers.TransactionsQuerySerializer)
    @action(detail=True, methods=["get"], pagination_class=None, filter_backends=[])
    def transactions(self, request: Request, pk: str) -> Response:
        """The transactional ids the cluster's coordinators know, with their current transaction
        (DescribeTransactions): teams see those under their transactional-id prefixes, org admins all."""
        cluster = self.get_object()
        query = serializers.TransactionsQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        found = transactions.list_open_transactions(
            actor=self.actor, cluster=cluster, state=query.validated_data.get("state")
        )
        return Response(serializers.OpenTransactionSerializer(found, many=True).data)

    @extend_schema(responses=serializers.HangingTransactionSerializer(many=True))
    @takes_query(serializers.HangingTransactionsQuerySerializer)
    @action(
        detail=True,
        methods=["get"],
        url_path="transactions/hanging",
        pagination_class=None,
        filter_backends=[],
    )
    def hanging_transactions(self, request: Request, pk: str) -> Response:
        """Org admins: open transactions on partitions that no coordinator will finish (older than
        `transaction.max.timeout.ms`); they hold read_committed consumers back."""
        cluster = self.get_object()
        query = serializers.HangingTransactionsQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        found = transactions.list_hanging_transactions(
            actor=self.actor, cluster=cluster, topic=query.validated_data.get("topic")
        )
        return Response(serializers.HangingTransactionSerializer(found, many=True).data)

    @extend_schema(request=serializers.AbortTransactionInputSerializer, responses={204: None})
    @action(detail=True, methods=["post"], url_path="transactions/abort")
    def abort_transaction(self, request: Request, pk: str) -> Response:
        """Org admins: aborts a producer's open transaction on one partition (an abort marker written at
        the partition's leader), as `kafka-transactions.sh abort` does for a hanging transaction."""
        cluster = self.get_object()
        data = self.validated_input(serializers.AbortTransactionInputSerializer)
        transactions.abort_hanging_transaction(actor=self.actor, cluster=cluster, **data)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["clusters"])
class OperationViewSet(ScopedReadOnlyViewSet):
    """Long-running cluster operations and their progress: step n of m, log lines, error; and teams'
    changes to clusters whose outcome is being confirmed. A team's changes are visible to that team (and
    its org admins) only; reading a running one looks at the cluster again (at most once a second)."""

    queryset = Operation.objects.select_related("cluster")
    serializer_class = serializers.OperationSerializer
    filterset_class = filtersets.OperationFilterSet
    ordering_fields = ["created_at", "state"]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        in_organization = Q(cluster__organization_id__in=visible_organization_ids(self.actor))
        return queryset.filter(
            (Q(team__isnull=True) & in_organization)
            | (Q(team__isnull=False) & visible_teams_q(self.actor, "team"))
        )

    def retrieve(self, request: Request, *args: object, **kwargs: object) -> Response:
        return Response(self.get_serializer(outcomes.settle_if_due(self.get_object())).data)
