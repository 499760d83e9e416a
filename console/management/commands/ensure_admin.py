"""Creates the first admin account once: from ADMIN_USERNAME/ADMIN_PASSWORD, or with a generated password
that is printed exactly once (only its hash is stored)."""

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the initial admin user if no superuser exists yet."

    def handle(self, *args: object, **options: object) -> None:
        users = get_user_model()
        if users.objects.filter(is_superuser=True).exists():
            self.stdout.write("Admin account already exists; leaving it unchanged.")
            return
        username = os.environ.get("ADMIN_USERNAME", "admin")
        email = os.environ.get("ADMIN_EMAIL", "")
        password = os.environ.get("ADMIN_PASSWORD")
        generated = not password
        if generated:
            password = secrets.token_urlsafe(18)
        users.objects.create_superuser(username=username, email=email, password=password)
        if generated:
            self.stdout.write(
                self.style.WARNING(
                    f"Created admin account '{username}' with password: {password}\n"
                    "This password is shown only once. Change it after the first login."
                )
            )
        else:
            self.stdout.write(f"Created admin account '{username}' from ADMIN_USERNAME/ADMIN_PASSWORD.")
