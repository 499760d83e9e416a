#!/usr/bin/env bash
# Command 2: the whole test suite — lint, architecture contracts, migration check, deploy checks, frontend
# type-check and unit tests, then the Python suite (unit, integration with real servers, e2e in Chromium) on PostgreSQL.
# Extra arguments go to pytest (e.g. scripts/test.sh tests/unit -x).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --test
export DJANGO_SETTINGS_MODULE=console.settings
if [[ -z "${STREAMHUB_DATA_DIR:-}" ]]; then
  STREAMHUB_DATA_DIR=$(mktemp -d /tmp/streamhub-test.XXXXXX)
  CLEANUP_DIRS=("$STREAMHUB_DATA_DIR")
fi
export STREAMHUB_DATA_DIR
PG_DIR=""
cleanup() {
  if [[ -n "$PG_DIR" ]]; then scripts/throwaway_postgres.sh stop "$PG_DIR"; fi
  rm -rf "${CLEANUP_DIRS[@]:-}"
}
trap cleanup EXIT
PY=.venv/bin/python
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

step "architecture contracts (import-linter, [tool.importlinter] in pyproject.toml)"
.venv/bin/lint-imports

step "migrations are up to date"
$PY manage.py makemigrations --check --dry-run

step "production deploy checks (DEBUG off, TLS on)"
DEBUG=0 USE_TLS=1 ALLOWED_HOSTS=kafka.example.com SECRET_KEY="$($PY -c 'import secrets; print(secrets.token_urlsafe(50))')" \
  $PY manage.py check --deploy --fail-level WARNING

if [[ -f frontend/package.json ]]; then
  step "frontend: type-check and unit tests"
  npm --prefix frontend run --silent typecheck
  npm --prefix frontend run --silent test
fi

# The database tests run on PostgreSQL, as in production. Use DATABASE_URL if given, else a throwaway cluster.
if [[ -z "${DATABASE_URL:-}" ]]; then
  step "starting a throwaway PostgreSQL"
  eval "$(scripts/throwaway_postgres.sh start)"
fi

step "pytest"
$PY -m pytest "${@:-tests}"
