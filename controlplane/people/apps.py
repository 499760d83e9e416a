from django.apps import AppConfig


class PeopleConfig(AppConfig):
    """People who sign in to the console: how they are created (invited or with a password), where their
    identity comes from (a local password today, an identity provider with single sign-on later), and the
    one-time links that set their passwords."""

    name = "controlplane.people"
    label = "people"
    verbose_name = "People"
