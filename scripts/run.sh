#!/usr/bin/env bash
# Command 1: set everything up and run the product on its embedded defaults, in the foreground.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
export DJANGO_SETTINGS_MODULE=console.settings
.venv/bin/python manage.py migrate --noinput
.venv/bin/python manage.py collectstatic --noinput -v 0
.venv/bin/python manage.py ensure_admin
.venv/bin/python manage.py ensure_default_cluster
exec .venv/bin/python manage.py runstack "$@"
