"""Output shapes of the lag API, and the chart query's input validator."""

from rest_framework import serializers

from controlplane.core.api.fields import POSITIVE_INT_RANGE
from controlplane.groups.api.serializers import MemberSerializer
from controlplane.lag.choices import Resolution
from controlplane.lag.models import GroupLag
from controlplane.lag.observations import Health


class PartitionHealthSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    committed_offset = serializers.IntegerField(allow_null=True)
    log_start_offset = serializers.IntegerField()
    log_end_offset = serializers.IntegerField()
    lag_messages = serializers.IntegerField()
    lag_seconds = serializers.FloatField(allow_null=True)
    lag_seconds_is_lower_bound = serializers.BooleanField()
    consume_rate = serializers.FloatField(allow_null=True, help_text="records/s over the health window")
    produce_rate = serializers.FloatField(allow_null=True, help_text="records/s over the health window")
    time_to_catch_up_seconds = serializers.FloatField(allow_null=True)
    status = serializers.ChoiceField(choices=Health.choices)
    reason = serializers.CharField()


class GroupLagSerializer(serializers.ModelSerializer):
    """A group's health as the latest sampling run saw it (the fleet view's rows)."""

    group = serializers.IntegerField(source="group_id", read_only=True)
    name = serializers.CharField(source="group.name", read_only=True)
    team = serializers.IntegerField(source="group.team_id", read_only=True, allow_null=True)

    class Meta:
        model = GroupLag
        fields = [
            "group",
            "cluster",
            "team",
            "name",
            "status",
            "reason",
            "lag_messages",
            "lag_seconds",
            "lag_seconds_is_lower_bound",
            "time_to_catch_up_seconds",
            "consume_rate",
            "produce_rate",
            "state",
            "member_count",
            "observed_at",
        ]
        extra_kwargs = {"member_count": POSITIVE_INT_RANGE}


class GroupLagDetailSerializer(GroupLagSerializer):
    """Plus the members (refreshed every minute) and every partition's health with its reason."""

    members = MemberSerializer(many=True)
    partitions = PartitionHealthSerializer(many=True)

    class Meta(GroupLagSerializer.Meta):
        fields = [*GroupLagSerializer.Meta.fields, "members", "partitions"]


class GroupLookupQuerySerializer(serializers.Serializer):
    cluster = serializers.IntegerField(
        required=False,
        **POSITIVE_INT_RANGE,
        help_text="The cluster whose group it is, when `{group}` is a name several clusters have.",
    )


class ChartQuerySerializer(GroupLookupQuerySerializer):
    since = serializers.DateTimeField(required=False, help_text="default: one hour before `until`")
    until = serializers.DateTimeField(required=False, help_text="default: now")
    resolution = serializers.ChoiceField(
        choices=[("auto", "Automatic"), *Resolution.choices],
        default="auto",
        help_text="auto: raw up to 1 hour, 1-minute rollups up to 7 days, 1-hour rollups beyond",
    )

    def validate(self, attrs: dict) -> dict:
        if "since" in attrs and "until" in attrs and attrs["since"] >= attrs["until"]:
            raise serializers.ValidationError({"since": "must be before until"})
        return attrs


class TotalSeriesSerializer(serializers.Serializer):
    lag_messages = serializers.ListField(child=serializers.IntegerField(allow_null=True))
    lag_seconds = serializers.ListField(child=serializers.FloatField(allow_null=True))


class PartitionSeriesSerializer(TotalSeriesSerializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()


class LagChartSerializer(serializers.Serializer):
    """Columnar series: `times[i]` goes with every series' i-th value (null: no value for that partition)."""

    group = serializers.IntegerField()
    resolution = serializers.ChoiceField(choices=Resolution.choices)
    since = serializers.DateTimeField()
    until = serializers.DateTimeField()
    times = serializers.ListField(child=serializers.DateTimeField())
    total = TotalSeriesSerializer()
    partitions = PartitionSeriesSerializer(many=True)
