#!/usr/bin/env bash
# Installs everything the product needs on a fresh Debian machine, idempotently:
#   system packages (apt), the Python virtualenv from requirements.lock, Apache Kafka's jars from Maven Central
#   (APACHE_KAFKA_INSTALL=false skips them), and the console build.
# Usage: scripts/bootstrap.sh [--test]   (--test adds what the test suite needs: Chromium, docker-compose, kcat,
#        Burrow and the ZooKeeper it keeps its state in, for tests/integration/lag/test_burrow.py)
set -euo pipefail
cd "$(dirname "$0")/.."

WITH_TEST_TOOLS=0
[[ "${1:-}" == "--test" ]] && WITH_TEST_TOOLS=1

say() { printf '\033[1m[bootstrap]\033[0m %s\n' "$*"; }

# --- system packages -------------------------------------------------------------------------
need_pkgs=()
command -v redis-server >/dev/null || need_pkgs+=(redis-server)
command -v kcat >/dev/null || need_pkgs+=(kcat)
# Spark (PySpark) runs on Java 17+; the topics source's JVM reader is compiled with javac.
command -v javac >/dev/null || [[ -x "${JAVA_HOME:-/nonexistent}/bin/javac" ]] || need_pkgs+=(default-jdk-headless)
# Apache Kafka (the apache-kafka engine, the conformance oracle) is resolved from Maven Central by Maven.
[[ "${APACHE_KAFKA_INSTALL:-true}" == false ]] || command -v mvn >/dev/null || need_pkgs+=(maven)
if [[ $WITH_TEST_TOOLS == 1 ]]; then
  command -v chromium >/dev/null || need_pkgs+=(chromium)
  command -v docker-compose >/dev/null || need_pkgs+=(docker-compose)
  command -v initdb >/dev/null || [[ -x /usr/lib/postgresql/15/bin/initdb ]] || need_pkgs+=(postgresql)
  # Debian's Burrow 1.2.1 (an old-protocol client of the broker) and the ZooKeeper it needs.
  [[ -x /usr/bin/Burrow ]] || need_pkgs+=(burrow)
  [[ -f /usr/share/java/zookeeper.jar ]] || need_pkgs+=(zookeeper)
  # librdkafka's test runner validates its statistics JSON against a schema with rapidjson
  # (bench/client_suites/run.py runs librdkafka's own tests against the broker).
  [[ -f /usr/include/rapidjson/schema.h ]] || need_pkgs+=(rapidjson-dev)
  # and its share-consumer tests produce zstd batches, which librdkafka only builds with libzstd present.
  [[ -f /usr/include/zstd.h ]] || need_pkgs+=(libzstd-dev)
fi
if ((${#need_pkgs[@]})); then
  SUDO=""
  [[ $(id -u) != 0 ]] && SUDO="sudo"
  say "installing system packages: ${need_pkgs[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

# --- Python virtualenv -------------------------------------------------------------------------
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
if [[ ! -x .venv/bin/python ]]; then
  say "creating .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi
lock_hash=$(cat requirements.lock pyproject.toml | sha256sum | cut -d' ' -f1)
if [[ "$(cat .venv/.lock-hash 2>/dev/null)" != "$lock_hash" ]]; then
  say "installing Python dependencies from requirements.lock"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements.lock
  echo "$lock_hash" > .venv/.lock-hash
fi

# --- Apache Kafka from Maven Central (jvm/apache-kafka/pom.xml: the pinned version and what it lays out) -----
if [[ "${APACHE_KAFKA_INSTALL:-true}" != false ]]; then
  kafka_version=$(sed -n 's#.*<kafka.version>\(.*\)</kafka.version>.*#\1#p' jvm/apache-kafka/pom.xml)
  kafka_home=${APACHE_KAFKA_HOME:-$PWD/.cache/apache-kafka}
  kafka_pom_hash=$(sha256sum jvm/apache-kafka/pom.xml | cut -d' ' -f1)
  if [[ "$(cat "$kafka_home/$kafka_version/.pom-hash" 2>/dev/null)" != "$kafka_pom_hash" ]]; then
    say "installing Apache Kafka $kafka_version from Maven Central into $kafka_home/$kafka_version"
    rm -rf "${kafka_home:?}/$kafka_version"
    mvn -q -B -f jvm/apache-kafka/pom.xml package -Dinstall.dir="$kafka_home/$kafka_version"
    echo "$kafka_pom_hash" > "$kafka_home/$kafka_version/.pom-hash"
  fi
fi

# --- Kafka Connect plugins from Maven Central beyond Apache Kafka's (jvm/connect-plugins/pom.xml: Debezium) -----
if [[ "${APACHE_KAFKA_INSTALL:-true}" != false ]]; then
  plugins_version=$(sed -n 's#.*<debezium.version>\(.*\)</debezium.version>.*#debezium-\1#p' jvm/connect-plugins/pom.xml)
  plugins_home=${CONNECT_PLUGINS_HOME:-$PWD/.cache/connect-plugins}
  plugins_pom_hash=$(sha256sum jvm/connect-plugins/pom.xml | cut -d' ' -f1)
  if [[ "$(cat "$plugins_home/$plugins_version/.pom-hash" 2>/dev/null)" != "$plugins_pom_hash" ]]; then
    say "installing Connect plugins ($plugins_version) from Maven Central into $plugins_home/$plugins_version"
    rm -rf "${plugins_home:?}/$plugins_version"
    mvn -q -B -f jvm/connect-plugins/pom.xml package -Dinstall.dir="$plugins_home/$plugins_version"
    echo "$plugins_pom_hash" > "$plugins_home/$plugins_version/.pom-hash"
  fi
fi

# --- the JVM ecosystem tests' Java (jvm/ecosystem/src), compiled against those jars into .cache/jvm-ecosystem/<digest> --
if [[ $WITH_TEST_TOOLS == 1 && "${APACHE_KAFKA_INSTALL:-true}" != false ]]; then
  # (and Spark's own Kafka connector, jvm/spark-kafka/pom.xml, into .cache/spark-kafka/<version>, redone when the pom changes)
  .venv/bin/python -m tests.fixtures.jvm_ecosystem >/dev/null
fi

# --- the Spark topics source's JVM reader (controlplane/spark/jvm.py), compiled against pyspark's jars ---------
if command -v javac >/dev/null || [[ -x "${JAVA_HOME:-/nonexistent}/bin/javac" ]]; then
  .venv/bin/python -m controlplane.spark.jvm >/dev/null
else
  say "warning: no javac (JDK 17+): Spark reads topics with the slower Python data source."
fi

# --- console (React) build ---------------------------------------------------------------------
if [[ -f frontend/package.json ]]; then
  pkg_hash=$(cat frontend/package.json frontend/package-lock.json 2>/dev/null | sha256sum | cut -d' ' -f1)
  if [[ ! -d frontend/node_modules || "$(cat frontend/node_modules/.lock-hash 2>/dev/null)" != "$pkg_hash" ]]; then
    say "installing frontend packages (npm ci)"
    npm --prefix frontend ci --no-audit --no-fund --loglevel=error
    echo "$pkg_hash" > frontend/node_modules/.lock-hash
  fi
  src_hash=$( (find frontend/src frontend/index.html frontend/vite.config.* frontend/tsconfig*.json -type f 2>/dev/null \
    | sort | xargs cat; echo "$pkg_hash") | sha256sum | cut -d' ' -f1)
  if [[ ! -f frontend/dist/index.html || "$(cat frontend/dist/.src-hash 2>/dev/null)" != "$src_hash" ]]; then
    say "building the console"
    npm --prefix frontend run build --silent
    echo "$src_hash" > frontend/dist/.src-hash
  fi
fi
# --- the OpenID provider the single sign-on tests run (npm package oidc-provider, pinned) ---------
if [[ $WITH_TEST_TOOLS == 1 ]]; then
  provider=tests/support/oidc_provider
  provider_hash=$(cat $provider/package.json $provider/package-lock.json | sha256sum | cut -d' ' -f1)
  if [[ "$(cat $provider/node_modules/.lock-hash 2>/dev/null)" != "$provider_hash" ]]; then
    say "installing the test OpenID provider (npm ci)"
    npm --prefix $provider ci --no-audit --no-fund --loglevel=error
    echo "$provider_hash" > $provider/node_modules/.lock-hash
  fi
fi
say "ready"
