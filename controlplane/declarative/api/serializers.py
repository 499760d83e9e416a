from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework import serializers

from controlplane.clusters.api.fields import VisibleClusterField
from controlplane.declarative.documents import openapi_schemas
from controlplane.declarative.models import ChangeSet, ManagedResource


class DocumentField(serializers.DictField):
    """One document; read_documents() checks it against its kind's schema (all problems at once)."""


class DocumentFieldSchema(OpenApiSerializerFieldExtension):
    """Describes a document in the OpenAPI document as exactly what the server accepts: one of the kinds'
    schemas (components `<Kind>Document`, rendered from the format's JSON Schema), chosen by `kind`."""

    target_class = DocumentField

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        mapping = {}
        for kind, schema in openapi_schemas().items():
            component = ResolvedComponent(
                name=f"{kind}Document", type=ResolvedComponent.SCHEMA, object=f"{kind}Document", schema=schema
            )
            auto_schema.registry.register_on_missing(component)
            mapping[kind] = component.ref["$ref"]
        return {
            "oneOf": [{"$ref": ref} for ref in mapping.values()],
            "discriminator": {"propertyName": "kind", "mapping": mapping},
        }


class DocumentsInputSerializer(serializers.Serializer):
    documents = serializers.ListField(
        child=DocumentField(),
        max_length=20000,
        help_text="The file set's documents (kind, metadata, spec).",
    )
    file_set = serializers.RegexField(
        r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$",
        help_text="Names the file set (e.g. the repository and folder): it owns what it applies, and prunes only that.",
    )
    prune = serializers.BooleanField(
        default=False, help_text="Delete what the file set manages but no longer declares."
    )
    team = serializers.CharField(required=False, help_text="A team slug that replaces every document's team.")
    cluster = serializers.CharField(
        required=False, help_text="A cluster name that replaces every document's cluster."
    )


class ApplyInputSerializer(DocumentsInputSerializer):
    plan_id = serializers.CharField(
        required=False,
        help_text="The reviewed plan's id: applying is refused (409 plan_changed) if the plan differs.",
    )


class ExportQuerySerializer(serializers.Serializer):
    team = serializers.CharField(help_text="The team's slug.")
    cluster = VisibleClusterField()


class PlannedChangeSerializer(serializers.Serializer):
    kind = serializers.CharField()
    name = serializers.CharField()
    team = serializers.CharField()
    cluster = serializers.CharField(allow_null=True)
    action = serializers.CharField()
    diff = serializers.DictField()
    drift = serializers.DictField()
    document = serializers.IntegerField(allow_null=True)
    refusal = serializers.DictField(required=False)


class PlanSerializer(serializers.Serializer):
    file_set = serializers.CharField()
    prune = serializers.BooleanField()
    plan_id = serializers.CharField()
    counts = serializers.DictField(child=serializers.IntegerField())
    changes = PlannedChangeSerializer(many=True)
    undeclared = serializers.ListField(child=serializers.DictField())


class ChangeSetSerializer(serializers.ModelSerializer):
    class Meta:
        model = ChangeSet
        fields = [
            "id",
            "organization",
            "file_set",
            "state",
            "actor_name",
            "request_id",
            "plan_id",
            "report",
            "created_at",
        ]


class ApplySerializer(serializers.Serializer):
    plan = PlanSerializer()
    change_set = ChangeSetSerializer(allow_null=True)


class ManagedResourceSerializer(serializers.ModelSerializer):
    team_slug = serializers.CharField(source="team.slug", read_only=True)
    cluster_name = serializers.CharField(source="cluster.name", read_only=True, allow_null=True, default=None)
    change_set_created_at = serializers.DateTimeField(source="change_set.created_at", read_only=True)

    class Meta:
        model = ManagedResource
        fields = [
            "id",
            "kind",
            "name",
            "team",
            "team_slug",
            "cluster",
            "cluster_name",
            "resource_id",
            "file_set",
            "change_set",
            "change_set_created_at",
            "labels",
            "spec",
            "updated_at",
        ]
