"""The registry's state. Every row belongs to one cluster's registry.

Schema ids are global within a registry: identical schemas (same type, canonical text and references) share
one id across subjects. A subject is the ordered list of its versions; a soft-deleted version keeps its row
(and its number) until it is permanently deleted.
"""

from django.db import models

from controlplane.schemas.choices import Compatibility, Mode, SchemaType


class Schema(models.Model):
    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="schemas")
    schema_id = models.PositiveIntegerField()
    schema_type = models.CharField(max_length=10, choices=SchemaType.choices)
    # The canonical stored form: compact JSON for Avro and JSON Schema, .proto text for Protobuf.
    text = models.TextField()
    # sha256 of type, text and references: identical registrations find their id with one indexed query.
    fingerprint = models.CharField(max_length=64)
    references = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(null=True, blank=True)
    rule_set = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cluster_id", "schema_id"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "schema_id"], name="unique_schema_id_per_registry"),
            models.UniqueConstraint(fields=["cluster", "fingerprint"], name="unique_schema_per_registry"),
        ]

    def __str__(self) -> str:
        return f"schema {self.schema_id} ({self.schema_type})"


class SubjectVersion(models.Model):
    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="+")
    subject = models.CharField(max_length=255)
    version = models.PositiveIntegerField()
    # RESTRICT, not PROTECT: deleting the cluster removes both sides together.
    schema = models.ForeignKey(Schema, on_delete=models.RESTRICT, related_name="subject_versions")
    deleted = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cluster_id", "subject", "version"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "subject", "version"], name="unique_version_per_subject"
            )
        ]
        indexes = [models.Index(fields=["cluster", "schema"], name="schemas_version_by_schema")]

    def __str__(self) -> str:
        return f"{self.subject} v{self.version}"


class SchemaReference(models.Model):
    """One reference of a schema to a subject version, so `referencedby` and delete checks are one query."""

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="+")
    schema = models.ForeignKey(Schema, on_delete=models.CASCADE, related_name="reference_rows")
    name = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    version = models.PositiveIntegerField()

    class Meta:
        ordering = ["schema_id", "name"]
        indexes = [models.Index(fields=["cluster", "subject", "version"], name="schemas_reference_target")]

    def __str__(self) -> str:
        return f"{self.name} -> {self.subject} v{self.version}"


class RegistryConfig(models.Model):
    """Compatibility settings of the whole registry (subject "") or of one subject."""

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="+")
    subject = models.CharField(max_length=255, blank=True)
    compatibility = models.CharField(max_length=20, choices=Compatibility.choices, blank=True)
    normalize = models.BooleanField(null=True, blank=True)
    # Other Confluent config fields (alias, validateFields, default/override metadata…), kept as given.
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["cluster_id", "subject"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "subject"], name="unique_config_per_subject")
        ]

    def __str__(self) -> str:
        return f"config {self.subject or '(global)'}"


class RegistryMode(models.Model):
    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="+")
    subject = models.CharField(max_length=255, blank=True)
    mode = models.CharField(max_length=20, choices=Mode.choices)

    class Meta:
        ordering = ["cluster_id", "subject"]
        constraints = [models.UniqueConstraint(fields=["cluster", "subject"], name="unique_mode_per_subject")]

    def __str__(self) -> str:
        return f"mode {self.subject or '(global)'}={self.mode}"


class RegistryState(models.Model):
    """A counter bumped by every write, so processes can tell when their cached answers went stale."""

    cluster = models.OneToOneField("clusters.Cluster", on_delete=models.CASCADE, related_name="+")
    generation = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["cluster_id"]

    def __str__(self) -> str:
        return f"registry {self.cluster_id} generation {self.generation}"
