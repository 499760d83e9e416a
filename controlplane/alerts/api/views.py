from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.alerts import filtersets, services
from controlplane.alerts.api import serializers
from controlplane.alerts.models import Alert, AlertRule, Notification, NotificationChannel, Silence
from controlplane.alerts.preview import preview_rule
from controlplane.tenancy.api.viewsets import (
    CreateWithServiceMixin,
    DestroyWithServiceMixin,
    ScopedModelViewSet,
    ScopedReadOnlyViewSet,
    UpdateWithServiceMixin,
    document_writes,
)
from controlplane.tenancy.choices import TeamRole


@extend_schema(tags=["alerts"])
@document_writes
class AlertRuleViewSet(ScopedModelViewSet):
    """Lag alert rules of the caller's teams (org admins: every team of their organization)."""

    action_roles = {"preview": TeamRole.VIEWER}
    queryset = AlertRule.objects.select_related("team", "cluster").prefetch_related("channels")
    serializer_class = serializers.AlertRuleSerializer
    write_role = TeamRole.DEVELOPER
    create_serializer_class = serializers.AlertRuleCreateInputSerializer
    update_serializer_class = serializers.AlertRuleUpdateInputSerializer
    filterset_class = filtersets.AlertRuleFilterSet
    ordering_fields = ["name", "created_at", "severity"]

    def perform_create(self, data: dict) -> AlertRule:
        return services.create_rule(actor=self.actor, **data)

    @extend_schema(
        request=serializers.AlertRulePreviewInputSerializer, responses=serializers.RulePreviewSerializer
    )
    @action(detail=False, methods=["post"])
    def preview(self, request: Request) -> Response:
        """The consumer groups a rule with these values matches now (from the latest sampling run), and
        whether its condition holds for each; nothing is saved."""
        data = self.validated_input(serializers.AlertRulePreviewInputSerializer)
        team = data.pop("team")
        data.pop("channels", None)
        return Response(preview_rule(actor=self.actor, team=team, values=data))

    def perform_update(self, rule: AlertRule, changes: dict) -> AlertRule:
        return services.update_rule(actor=self.actor, rule=rule, **changes)

    def perform_destroy(self, rule: AlertRule) -> None:
        services.delete_rule(actor=self.actor, rule=rule)


@extend_schema(tags=["alerts"])
@extend_schema_view(
    create=extend_schema(
        request=serializers.NotificationChannelCreateInputSerializer,
        responses={201: serializers.NotificationChannelWithSecretSerializer},
    ),
    update=extend_schema(
        request=serializers.NotificationChannelUpdateInputSerializer,
        responses=serializers.NotificationChannelSerializer,
    ),
    partial_update=extend_schema(
        request=serializers.NotificationChannelUpdateInputSerializer,
        responses=serializers.NotificationChannelSerializer,
    ),
)
class NotificationChannelViewSet(UpdateWithServiceMixin, DestroyWithServiceMixin, ScopedReadOnlyViewSet):
    """Where a team's alerts go: signed webhooks, Slack-compatible webhooks, e-mail."""

    queryset = NotificationChannel.objects.select_related("team")
    serializer_class = serializers.NotificationChannelSerializer
    write_role = TeamRole.DEVELOPER
    update_serializer_class = serializers.NotificationChannelUpdateInputSerializer
    filterset_class = filtersets.NotificationChannelFilterSet
    ordering_fields = ["name", "created_at"]

    def _with_secret(self, channel: NotificationChannel, secret: str, status_code: int) -> Response:
        context = {**self.get_serializer_context(), "secret": secret}
        body = serializers.NotificationChannelWithSecretSerializer(channel, context=context).data
        return Response(body, status=status_code)

    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Creates a channel; a webhook's signing secret is in this response only."""
        data = self.validated_input(serializers.NotificationChannelCreateInputSerializer)
        channel, secret = services.create_channel(actor=self.actor, **data)
        return self._with_secret(channel, secret, status.HTTP_201_CREATED)

    def perform_update(self, channel: NotificationChannel, changes: dict) -> NotificationChannel:
        return services.update_channel(actor=self.actor, channel=channel, **changes)

    def perform_destroy(self, channel: NotificationChannel) -> None:
        services.delete_channel(actor=self.actor, channel=channel)

    @extend_schema(request=None, responses=serializers.NotificationChannelWithSecretSerializer)
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request: Request, pk: str | None = None) -> Response:
        """A new webhook signing secret, shown this once; the old one stops at once."""
        channel, secret = services.rotate_channel_secret(actor=self.actor, channel=self.get_object())
        return self._with_secret(channel, secret, status.HTTP_200_OK)

    @extend_schema(request=None, responses={202: serializers.NotificationSerializer})
    @action(detail=True, methods=["post"])
    def test(self, request: Request, pk: str | None = None) -> Response:
        """Queues a test notification; follow its delivery attempts at /alert-notifications/{id}/."""
        notification = services.send_test_notification(actor=self.actor, channel=self.get_object())
        body = serializers.NotificationSerializer(notification, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_202_ACCEPTED)


@extend_schema(tags=["alerts"])
@document_writes
class SilenceViewSet(CreateWithServiceMixin, ScopedReadOnlyViewSet):
    """Silences: matching alerts keep firing, but their notifications are suppressed (and recorded so)."""

    queryset = Silence.objects.select_related("team", "cluster", "rule")
    serializer_class = serializers.SilenceSerializer
    write_role = TeamRole.DEVELOPER
    create_serializer_class = serializers.SilenceCreateInputSerializer
    filterset_class = filtersets.SilenceFilterSet
    ordering_fields = ["starts_at", "ends_at", "created_at"]

    def perform_create(self, data: dict) -> Silence:
        return services.create_silence(actor=self.actor, **data)

    @extend_schema(request=None, responses=serializers.SilenceSerializer)
    @action(detail=True, methods=["post"])
    def expire(self, request: Request, pk: str | None = None) -> Response:
        """Ends the silence now."""
        return self.respond(services.expire_silence(actor=self.actor, silence=self.get_object()))


@extend_schema(tags=["alerts"])
class AlertViewSet(ScopedReadOnlyViewSet):
    """Active alerts (`?active=true`) and their history, newest first."""

    write_role = TeamRole.DEVELOPER
    queryset = Alert.objects.select_related("rule__team", "cluster")
    serializer_class = serializers.AlertSerializer
    filterset_class = filtersets.AlertFilterSet
    ordering_fields = ["pending_since", "fired_at", "resolved_at", "severity", "value"]
    team_path = "rule__team"

    @extend_schema(request=None, responses=serializers.AlertSerializer)
    @action(detail=True, methods=["post"])
    def acknowledge(self, request: Request, pk: str | None = None) -> Response:
        """Records who is handling the alert; its reminders stop."""
        return self.respond(services.acknowledge_alert(actor=self.actor, alert=self.get_object()))


@extend_schema(tags=["alerts"])
class NotificationViewSet(ScopedReadOnlyViewSet):
    """Notifications sent (or suppressed) per channel, with every delivery attempt."""

    queryset = Notification.objects.select_related("channel").prefetch_related("attempts")
    serializer_class = serializers.NotificationSerializer
    filterset_class = filtersets.NotificationFilterSet
    ordering_fields = ["created_at"]
    team_path = "channel__team"
