"""The shape of one Kafka config as the API shows it, for topics and brokers alike."""

from rest_framework import serializers


class ConfigDefaultSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="the config (or broker synonym) the value comes from")
    value = serializers.CharField(allow_null=True, help_text="in the unit of the config itself")
    source = serializers.CharField()


class ConfigRuleSerializer(serializers.Serializer):
    allowed = serializers.BooleanField(help_text="whether the team's policy lets it set this config")
    minimum = serializers.IntegerField(allow_null=True)
    maximum = serializers.IntegerField(allow_null=True)
    reason = serializers.CharField(allow_blank=True, help_text="why the bounds exist")


class ConfigEntrySerializer(serializers.Serializer):
    value = serializers.CharField(allow_null=True)
    source = serializers.CharField(
        help_text="Kafka's config source, e.g. DYNAMIC_TOPIC_CONFIG, DEFAULT_CONFIG"
    )
    read_only = serializers.BooleanField()
    sensitive = serializers.BooleanField()
    type = serializers.CharField(
        allow_null=True,
        help_text="Kafka's config type (boolean, string, int, long, double, list…), if reported",
    )
    documentation = serializers.CharField(
        allow_null=True, help_text="what the config means, as the cluster says"
    )
    default = ConfigDefaultSerializer(
        allow_null=True, help_text="the value a reset returns to (the next synonym), if the cluster says"
    )
    choices = serializers.ListField(
        child=serializers.CharField(), help_text="the values Kafka accepts, if a set"
    )
    multiple = serializers.BooleanField(help_text="several choices at once, comma separated (cleanup.policy)")
    unit = serializers.ChoiceField(
        choices=["ms", "seconds", "minutes", "hours", "bytes", "bytes_per_second"], allow_null=True
    )
    unlimited = serializers.CharField(allow_null=True, help_text="the value that turns the limit off")
    rule = ConfigRuleSerializer()
