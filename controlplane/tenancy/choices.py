"""Enumerations of the tenancy domain, shared by models, API and console."""

from django.db import models


class TeamRole(models.TextChoices):
    TEAM_ADMIN = "team_admin", "Team admin"
    DEVELOPER = "developer", "Developer"
    VIEWER = "viewer", "Viewer"


# Higher ranks include everything lower ranks may do.
ROLE_RANK: dict[str, int] = {TeamRole.VIEWER: 1, TeamRole.DEVELOPER: 2, TeamRole.TEAM_ADMIN: 3}


class PrefixResourceType(models.TextChoices):
    TOPIC = "topic", "Topic"
    GROUP = "group", "Consumer group"
    TRANSACTIONAL_ID = "transactional_id", "Transactional id"
    SUBJECT = "subject", "Schema subject"
