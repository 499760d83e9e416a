from django.db.models import Q, QuerySet
from drf_spectacular.utils import extend_schema

from controlplane.audit.api.serializers import AuditEventSerializer
from controlplane.audit.filtersets import AuditEventFilterSet
from controlplane.audit.models import AuditEvent
from controlplane.tenancy.access import administered_team_ids, org_roles
from controlplane.tenancy.api.viewsets import ScopedReadOnlyViewSet


@extend_schema(tags=["audit"])
class AuditEventViewSet(ScopedReadOnlyViewSet):
    """The change log, read-only: org admins read their organization's, team admins their team's."""

    queryset = AuditEvent.objects.all()
    serializer_class = AuditEventSerializer
    filterset_class = AuditEventFilterSet
    ordering_fields = ["timestamp", "action", "resource_type"]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        visible = Q(organization_id__in=list(org_roles(self.actor))) | Q(
            team_id__in=administered_team_ids(self.actor)
        )
        if self.actor.user is not None and self.actor.user.is_superuser and self.actor.api_key is None:
            visible |= Q(organization_id__isnull=True)  # platform-level events, e.g. personal keys
        return queryset.filter(visible)
