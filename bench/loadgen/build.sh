#!/usr/bin/env bash
# Builds the C load generator against Debian's librdkafka (installed here if missing).
# Prints the path of the binary.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ ! -f /usr/include/librdkafka/rdkafka.h ]]; then
  SUDO=""; [[ $(id -u) != 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq librdkafka-dev gcc >/dev/null
fi
out=var/bench/kafka_loadgen
mkdir -p "$(dirname "$out")"
if [[ ! -x $out || bench/loadgen/kafka_loadgen.c -nt $out ]]; then
  gcc -O2 -Wall -Wextra -o "$out" bench/loadgen/kafka_loadgen.c -lrdkafka
fi
echo "$PWD/$out"
