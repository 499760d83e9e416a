import django_filters

from controlplane.core.api.filters import ApiFilterSet
from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from controlplane.tenancy.models import Membership, Organization, OrgMembership, Team, TeamPolicy, TeamPrefix


class OrganizationFilterSet(ApiFilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Organization
        fields = ["name", "slug"]


class OrgMembershipFilterSet(ApiFilterSet):
    username = django_filters.CharFilter(field_name="user__username")

    class Meta:
        model = OrgMembership
        fields = ["organization", "username", "is_org_admin"]


class TeamFilterSet(ApiFilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Team
        fields = ["organization", "name", "slug"]


class MembershipFilterSet(ApiFilterSet):
    username = django_filters.CharFilter(field_name="user__username")
    role = django_filters.ChoiceFilter(choices=TeamRole.choices)

    class Meta:
        model = Membership
        fields = ["team", "username", "role"]


class TeamPrefixFilterSet(ApiFilterSet):
    resource_type = django_filters.ChoiceFilter(choices=PrefixResourceType.choices)

    class Meta:
        model = TeamPrefix
        fields = ["organization", "team", "resource_type", "prefix"]


class TeamPolicyFilterSet(ApiFilterSet):
    class Meta:
        model = TeamPolicy
        fields = ["team"]
