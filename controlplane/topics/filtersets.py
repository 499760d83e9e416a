import django_filters

from controlplane.core.api.filters import ApiFilterSet
from controlplane.topics.models import Topic


class TopicFilterSet(ApiFilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    search = django_filters.CharFilter(
        field_name="name", lookup_expr="icontains", help_text="Topics whose name contains this text."
    )

    class Meta:
        model = Topic
        fields = ["cluster", "team", "managed", "exists_on_cluster", "name"]
