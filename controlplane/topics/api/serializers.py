"""Input validators (…InputSerializer) and output shapes (…Serializer) of topics and their messages."""

from rest_framework import serializers

from controlplane.clusters.api.fields import VisibleClusterField
from controlplane.core.api.config_fields import ConfigEntrySerializer
from controlplane.core.api.fields import POSITIVE_INT_RANGE, POSITIVE_SMALL_INT_RANGE
from controlplane.schemas.choices import SchemaType
from controlplane.tenancy.api.fields import VisiblePrimaryKeyField
from controlplane.tenancy.models import Team
from controlplane.topics.cel_filter import MAX_EXPRESSION_CHARS
from controlplane.topics.choices import BrowseStart
from controlplane.topics.models import Topic

# Outputs


class TopicSerializer(serializers.ModelSerializer):
    """A topic as lists show it: desired spec and the last observed state (cached by the reconciler)."""

    class Meta:
        model = Topic
        fields = [
            "id",
            "cluster",
            "team",
            "name",
            "managed",
            "partitions",
            "replication_factor",
            "configs",
            "exists_on_cluster",
            "observed_partitions",
            "observed_replication_factor",
            "observed_configs",
            "size_bytes",
            "message_count",
            "observed_at",
            "created_at",
        ]
        extra_kwargs = {
            "partitions": POSITIVE_INT_RANGE,
            "observed_partitions": POSITIVE_INT_RANGE,
            "replication_factor": POSITIVE_SMALL_INT_RANGE,
            "observed_replication_factor": POSITIVE_SMALL_INT_RANGE,
        }


class PartitionStateSerializer(serializers.Serializer):
    partition = serializers.IntegerField()
    leader = serializers.IntegerField()
    replicas = serializers.ListField(child=serializers.IntegerField())
    isr = serializers.ListField(child=serializers.IntegerField())
    offline_replicas = serializers.ListField(
        child=serializers.IntegerField(), help_text="replicas on brokers the cluster does not list"
    )
    under_replicated = serializers.BooleanField(help_text="fewer in-sync replicas than replicas")
    offline = serializers.BooleanField(help_text="no leader")
    adding_replicas = serializers.ListField(
        child=serializers.IntegerField(), help_text="replicas a reassignment is copying to"
    )
    removing_replicas = serializers.ListField(
        child=serializers.IntegerField(), help_text="replicas a reassignment will drop"
    )
    start_offset = serializers.IntegerField()
    end_offset = serializers.IntegerField()
    size_bytes = serializers.IntegerField()


class LiveStateSerializer(serializers.Serializer):
    exists = serializers.BooleanField()
    partitions = PartitionStateSerializer(many=True)
    configs = serializers.DictField(child=ConfigEntrySerializer())


class TopicDetailSerializer(TopicSerializer):
    live = serializers.SerializerMethodField()

    class Meta(TopicSerializer.Meta):
        fields = [*TopicSerializer.Meta.fields, "live"]

    def get_live(self, topic: Topic) -> dict:
        return LiveStateSerializer(self.context["live"]).data


class DecodedPayloadSerializer(serializers.Serializer):
    """A key or value decoded with the schema registry (Confluent framing: magic byte 0, schema id)."""

    schema_id = serializers.IntegerField()
    format = serializers.ChoiceField(choices=SchemaType.choices, allow_null=True)
    subject = serializers.CharField(allow_null=True, help_text="A subject holding the schema, if readable.")
    version = serializers.IntegerField(allow_null=True)
    message_type = serializers.CharField(allow_null=True, help_text="Protobuf: the message's full name.")
    value = serializers.JSONField(allow_null=True)
    error = serializers.CharField(allow_null=True, help_text="Why the payload could not be decoded.")


class PayloadSerializer(serializers.Serializer):
    data = serializers.CharField(allow_null=True)
    encoding = serializers.ChoiceField(choices=["utf-8", "base64", "null"])
    decoded = DecodedPayloadSerializer(
        required=False,
        help_text="Keys and values only: present when the payload starts with a schema registry id.",
    )


class HeaderSerializer(serializers.Serializer):
    key = serializers.CharField()
    value = PayloadSerializer()


class MessageSerializer(serializers.Serializer):
    partition = serializers.IntegerField()
    offset = serializers.IntegerField()
    timestamp = serializers.DateTimeField()
    size = serializers.IntegerField(help_text="Bytes of key, value and headers.")
    key = PayloadSerializer()
    value = PayloadSerializer()
    headers = HeaderSerializer(many=True)


class ScanProgressSerializer(serializers.Serializer):
    scanned = serializers.IntegerField(help_text="Records looked at so far in this scan (all requests).")
    bytes_scanned = serializers.IntegerField()
    matched = serializers.IntegerField()
    remaining = serializers.IntegerField(
        help_text="Offsets left in the scan's range (approximately records)."
    )
    done = serializers.BooleanField()
    stopped_because = serializers.ChoiceField(
        choices=["limit", "end", "byte_cap"], allow_null=True, help_text="Why the scan ended, when it did."
    )
    filter_errors = serializers.IntegerField(help_text="Records this request on which the filter failed.")
    first_filter_error = serializers.CharField(allow_null=True)


class BrowseResultSerializer(serializers.Serializer):
    messages = MessageSerializer(many=True)
    cursor = serializers.CharField(
        allow_null=True,
        help_text="Pass it back (with the same query) to go on: the scan's next step or the tail's next poll. "
        "Null: the scan is complete.",
    )
    progress = ScanProgressSerializer(allow_null=True, help_text="Scans and tails only.")
    lag = serializers.IntegerField(
        allow_null=True, help_text="Live tail: records in the log after the cursor (behind the log end)."
    )
    end_offsets = serializers.DictField(
        child=serializers.IntegerField(), help_text="Each partition's log end offset when last read."
    )


class ProducedSerializer(serializers.Serializer):
    partition = serializers.IntegerField()
    offset = serializers.IntegerField()


class PurgedSerializer(serializers.Serializer):
    start_offsets = serializers.DictField(child=serializers.IntegerField())


# Inputs

CONFIG_VALUE = serializers.CharField(allow_null=True, allow_blank=True, max_length=1000)


class TopicCreateInputSerializer(serializers.Serializer):
    cluster = VisibleClusterField()
    team = VisiblePrimaryKeyField(queryset=Team.objects.all())
    name = serializers.CharField(max_length=249)
    partitions = serializers.IntegerField(min_value=1, max_value=100_000)
    replication_factor = serializers.IntegerField(
        min_value=1, max_value=32, required=False, help_text="default: the cluster's (3 on 3+ local brokers)"
    )
    configs = serializers.DictField(child=serializers.CharField(max_length=1000), default=dict)
    validate_only = serializers.BooleanField(default=False)


class TopicConfigsInputSerializer(serializers.Serializer):
    configs = serializers.DictField(
        child=CONFIG_VALUE, help_text="Kafka config names to set; null returns one to the cluster default."
    )


class PartitionsInputSerializer(serializers.Serializer):
    partitions = serializers.IntegerField(min_value=1, max_value=100_000, help_text="The new total.")


class PurgeInputSerializer(serializers.Serializer):
    partition = serializers.IntegerField(min_value=0, required=False, allow_null=True, default=None)
    before_offset = serializers.IntegerField(min_value=0, required=False, allow_null=True, default=None)


class DeleteTopicInputSerializer(serializers.Serializer):
    confirm_name = serializers.CharField(max_length=249, help_text="The topic's name, to confirm.")


class AdoptInputSerializer(serializers.Serializer):
    team = VisiblePrimaryKeyField(queryset=Team.objects.all())


class BrowseInputSerializer(serializers.Serializer):
    start = serializers.ChoiceField(choices=BrowseStart.choices, default=BrowseStart.NEWEST)
    partition = serializers.IntegerField(min_value=0, required=False, default=None)
    offset = serializers.IntegerField(min_value=0, required=False, default=None)
    timestamp = serializers.DateTimeField(required=False, default=None)
    limit = serializers.IntegerField(min_value=1, max_value=500, default=50)
    key_contains = serializers.CharField(required=False, default="", max_length=200)
    value_contains = serializers.CharField(required=False, default="", max_length=200)
    header_key = serializers.CharField(required=False, default="", max_length=200)
    filter = serializers.CharField(
        required=False,
        default="",
        max_length=MAX_EXPRESSION_CHARS,
        trim_whitespace=True,
        help_text="A CEL expression over partition, offset, timestamp, size, key, value, keyText, "
        'valueText and headers, e.g. `value.amount > 100 && headers["source"] == "web"`.',
    )
    cursor = serializers.CharField(required=False, default="", max_length=100_000)
    live = serializers.BooleanField(required=False, default=False, help_text="Start a live tail.")
    wait = serializers.FloatField(
        required=False, default=None, min_value=0, max_value=30, help_text="Live tail: seconds to wait."
    )


class ProduceInputSerializer(serializers.Serializer):
    key = serializers.CharField(allow_null=True, required=False, default=None, max_length=100_000)
    value = serializers.CharField(
        allow_null=True, allow_blank=True, required=False, default=None, max_length=1_000_000
    )
    headers = serializers.DictField(child=serializers.CharField(max_length=10_000), default=dict)
    encoding = serializers.ChoiceField(choices=["utf-8", "base64"], default="utf-8")
    partition = serializers.IntegerField(min_value=0, required=False, default=None)
