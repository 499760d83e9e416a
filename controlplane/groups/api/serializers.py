"""Input validators (…InputSerializer) and output shapes (…Serializer) of consumer groups."""

from rest_framework import serializers

from controlplane.core.api.fields import POSITIVE_INT_RANGE
from controlplane.groups.choices import ResetStrategy
from controlplane.groups.models import ConsumerGroup, OffsetReset


class PartitionLagSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    committed_offset = serializers.IntegerField()
    log_end_offset = serializers.IntegerField()
    lag = serializers.IntegerField()


class ConsumerGroupSerializer(serializers.ModelSerializer):
    """A group as the sampler last saw it (lists never wait on the cluster)."""

    class Meta:
        model = ConsumerGroup
        fields = [
            "id",
            "cluster",
            "team",
            "name",
            "group_type",
            "state",
            "member_count",
            "total_lag",
            "observed_at",
        ]
        extra_kwargs = {"member_count": POSITIVE_INT_RANGE}


class AssignmentSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()


class MemberSerializer(serializers.Serializer):
    member_id = serializers.CharField()
    client_id = serializers.CharField()
    host = serializers.CharField()
    assignments = AssignmentSerializer(many=True)


class SharePartitionSerializer(serializers.Serializer):
    """A share-partition: start offset (SPSO), log end, the in-flight window between them, the records in
    it already acknowledged, and the backlog (not yet acknowledged: acquired or available)."""

    topic = serializers.CharField()
    partition = serializers.IntegerField()
    start_offset = serializers.IntegerField()
    log_end_offset = serializers.IntegerField()
    in_flight = serializers.IntegerField()
    acknowledged = serializers.IntegerField()
    lag = serializers.IntegerField()


class GroupConfigSerializer(serializers.Serializer):
    name = serializers.CharField()
    value = serializers.CharField(allow_null=True)
    source = serializers.CharField()


class StreamsTaskSerializer(serializers.Serializer):
    subtopology = serializers.CharField()
    partitions = serializers.ListField(child=serializers.IntegerField())


class StreamsMemberSerializer(serializers.Serializer):
    member_id = serializers.CharField()
    client_id = serializers.CharField()
    host = serializers.CharField()
    process_id = serializers.CharField()
    member_epoch = serializers.IntegerField()
    active_tasks = StreamsTaskSerializer(many=True)
    standby_tasks = StreamsTaskSerializer(many=True)
    warmup_tasks = StreamsTaskSerializer(many=True)


class SubtopologySerializer(serializers.Serializer):
    subtopology_id = serializers.CharField()
    source_topics = serializers.ListField(child=serializers.CharField())
    repartition_sink_topics = serializers.ListField(child=serializers.CharField())
    state_changelog_topics = serializers.ListField(child=serializers.CharField())
    repartition_source_topics = serializers.ListField(child=serializers.CharField())


class StreamsGroupSerializer(serializers.Serializer):
    group_epoch = serializers.IntegerField()
    topology_epoch = serializers.IntegerField()
    subtopologies = SubtopologySerializer(many=True)
    members = StreamsMemberSerializer(many=True)


class LiveGroupSerializer(serializers.Serializer):
    state = serializers.CharField()
    protocol = serializers.CharField()
    members = MemberSerializer(many=True)
    offsets = PartitionLagSerializer(many=True)
    total_lag = serializers.IntegerField()
    share_partitions = SharePartitionSerializer(many=True)
    share_configs = GroupConfigSerializer(many=True)
    streams = StreamsGroupSerializer(allow_null=True)


class ConsumerGroupDetailSerializer(ConsumerGroupSerializer):
    live = serializers.SerializerMethodField()

    class Meta(ConsumerGroupSerializer.Meta):
        fields = [*ConsumerGroupSerializer.Meta.fields, "live"]

    def get_live(self, group: ConsumerGroup) -> dict:
        return LiveGroupSerializer(self.context["live"]).data


class PlannedOffsetSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    old_offset = serializers.IntegerField(allow_null=True)
    new_offset = serializers.IntegerField()


class OffsetResetSerializer(serializers.ModelSerializer):
    offsets = PlannedOffsetSerializer(many=True)

    class Meta:
        model = OffsetReset
        fields = [
            "id",
            "group",
            "strategy",
            "parameters",
            "offsets",
            "requested_by",
            "applied_at",
            "undone_at",
        ]


class ExactOffsetInputSerializer(serializers.Serializer):
    topic = serializers.CharField(max_length=249)
    partition = serializers.IntegerField(min_value=0)
    offset = serializers.IntegerField(min_value=0)


class ResetInputSerializer(serializers.Serializer):
    strategy = serializers.ChoiceField(choices=ResetStrategy.choices)
    topics = serializers.ListField(child=serializers.CharField(max_length=249), default=list, max_length=100)
    timestamp = serializers.DateTimeField(required=False, default=None)
    offsets = ExactOffsetInputSerializer(many=True, required=False, default=list)
    shift_by = serializers.IntegerField(required=False, default=0)


class DeleteOffsetsInputSerializer(serializers.Serializer):
    topic = serializers.CharField(max_length=249)


class ShareConfigsInputSerializer(serializers.Serializer):
    """Delivery settings to set (name -> value) and to return to the broker's default."""

    set = serializers.DictField(child=serializers.CharField(max_length=100), default=dict)
    delete = serializers.ListField(child=serializers.CharField(max_length=100), default=list, max_length=20)
