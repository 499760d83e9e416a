import django_filters

from controlplane.audit.choices import ActorType, Result, Via
from controlplane.audit.models import AuditEvent
from controlplane.core.api.filters import ApiFilterSet, IdFilter, UtcDateTimeFilter


class AuditEventFilterSet(ApiFilterSet):
    actor = django_filters.CharFilter(
        field_name="actor_name", help_text="A username or service-account:<name>."
    )
    actor_type = django_filters.ChoiceFilter(choices=ActorType.choices)
    via = django_filters.ChoiceFilter(choices=Via.choices)
    result = django_filters.ChoiceFilter(choices=Result.choices)
    team = IdFilter(field_name="team_id")
    organization = IdFilter(field_name="organization_id")
    since = UtcDateTimeFilter(field_name="timestamp", lookup_expr="gte")
    until = UtcDateTimeFilter(field_name="timestamp", lookup_expr="lt")

    class Meta:
        model = AuditEvent
        fields = [
            "actor",
            "actor_type",
            "via",
            "api_key_id",
            "action",
            "resource_type",
            "resource_id",
            "result",
            "team",
            "organization",
            "since",
            "until",
        ]
