"""Serializer fields that reference objects by id, limited to what the caller may see (tenancy's access rules)."""

from typing import Any

from django.db.models import QuerySet
from rest_framework import serializers

from controlplane.tenancy.access import Actor, visible_organization_ids, visible_teams_q


def _view_actor(field: serializers.Field) -> Actor | None:
    view = field.context.get("view")
    if view is None or getattr(view, "swagger_fake_view", False):
        return None
    return view.actor


class VisiblePrimaryKeyField(serializers.PrimaryKeyRelatedField):
    """A reference to a team-owned object the caller may see. Ids of objects it may not see are "does not
    exist", never a 403 that would confirm they exist. `team_path` leads from the object to its team."""

    def __init__(self, *, team_path: str = "", **kwargs: Any) -> None:
        self.team_path = team_path
        super().__init__(**kwargs)

    def get_queryset(self) -> QuerySet:
        queryset = super().get_queryset()
        actor = _view_actor(self)
        return queryset.none() if actor is None else queryset.filter(visible_teams_q(actor, self.team_path))


class VisibleOrganizationField(serializers.PrimaryKeyRelatedField):
    def get_queryset(self) -> QuerySet:
        queryset = super().get_queryset()
        actor = _view_actor(self)
        return queryset.none() if actor is None else queryset.filter(id__in=visible_organization_ids(actor))
