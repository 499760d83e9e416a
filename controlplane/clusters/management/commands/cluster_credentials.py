"""Prints the control plane's super-user credentials on a cluster, for an operator at this host's shell."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from controlplane.clusters.choices import ClusterStatus
from controlplane.clusters.models import Cluster
from controlplane.clusters.services import reveal_super_user_credentials
from controlplane.core.errors import ServiceError


class Command(BaseCommand):
    help = (
        "Print a cluster's bootstrap address, security protocol, SASL mechanism, and the control plane's "
        "super user and password (the reading is audited)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("cluster", help="the cluster's name")
        parser.add_argument("--organization", help="the organization's name, when several have the cluster")

    def handle(self, *args: object, **options: object) -> None:
        clusters = Cluster.objects.filter(name=options["cluster"]).exclude(status=ClusterStatus.DELETED)
        if options["organization"]:
            clusters = clusters.filter(organization__name=options["organization"])
        found = list(clusters.select_related("organization"))
        if not found:
            raise CommandError(f"No cluster named {options['cluster']!r}.")
        if len(found) > 1:
            names = ", ".join(sorted(cluster.organization.name for cluster in found))
            raise CommandError(
                f"Several organizations have a cluster {options['cluster']!r} ({names}): pass --organization."
            )
        try:
            credentials = reveal_super_user_credentials(cluster=found[0])
        except ServiceError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"bootstrap.servers={credentials.bootstrap_servers}\n"
            f"security.protocol={credentials.security_protocol}\n"
            f"sasl.mechanism={credentials.sasl_mechanism}\n"
            f"sasl.username={credentials.username}\n"
            f"sasl.password={credentials.password}\n"
        )
