"""Defines the default local cluster once, through the same service and workflow as the API."""

import os

from django.core.management.base import BaseCommand

from controlplane.clusters.provisioners.local import port_is_free
from controlplane.clusters.services import ensure_default_cluster


class Command(BaseCommand):
    help = "Create the default organization's local cluster definition if it does not exist yet."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--organization", default=os.environ.get("DEFAULT_ORGANIZATION", "Default"))
        parser.add_argument("--name", default=os.environ.get("DEFAULT_CLUSTER_NAME", "local"))
        parser.add_argument(
            "--port",
            type=int,
            default=int(os.environ.get("DEFAULT_CLUSTER_PORT", "9092")),
            help="the broker's port on 127.0.0.1 (0 picks a free one)",
        )
        parser.add_argument(
            "--brokers",
            type=int,
            default=int(os.environ.get("DEFAULT_CLUSTER_BROKERS", "3")),
            help="brokers of the default cluster (1: a single broker; 3: replicated with a controller quorum)",
        )

    def handle(self, *args: object, **options: object) -> None:
        port = int(options["port"])
        cluster = ensure_default_cluster(
            organization_name=str(options["organization"]),
            cluster_name=str(options["name"]),
            # Another Kafka may already own the well-known port; then any free port will do.
            port=port if port == 0 or port_is_free(port) else 0,
            broker_count=int(options["brokers"]),
        )
        if cluster is None:
            self.stdout.write(f"Cluster '{options['name']}' already exists; leaving it unchanged.")
        else:
            self.stdout.write(
                f"Requested local cluster '{cluster.name}' in {cluster.organization.name}; "
                "the worker provisions it when the stack runs. Its super user's credentials: "
                f"manage.py cluster_credentials {cluster.name}"
            )
