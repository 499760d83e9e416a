import django_filters

from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from controlplane.tenancy.models import Membership, Organization, OrgMembership, Team, TeamPolicy, TeamPrefix


class OrganizationFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Organization
        fields = ["name", "slug"]


class OrgMembershipFilterSet(django_filters.FilterSet):
    username = django_filters.CharFilter(field_name="user__username")

    class Meta:
        model = OrgMembership
        fields = ["organization", "username", "is_org_admin"]


class TeamFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Team
        fields = ["organization", "name", "slug"]


class MembershipFilterSet(django_filters.FilterSet):
    username = django_filters.CharFilter(field_name="user__username")
    role = django_filters.ChoiceFilter(choices=TeamRole.choices)

    class Meta:
        model = Membership
        fields = ["team", "username", "role"]


class TeamPrefixFilterSet(django_filters.FilterSet):
    resource_type = django_filters.ChoiceFilter(choices=PrefixResourceType.choices)

    class Meta:
        model = TeamPrefix
        fields = ["organization", "team", "resource_type", "prefix"]


class TeamPolicyFilterSet(django_filters.FilterSet):
    class Meta:
        model = TeamPolicy
        fields = ["team"]
