"""Run the Kafka clients' own integration suites against StreamHub's broker and print the counts.

Fetches nothing: give it the client checkouts (and the venvs their test dependencies are installed in), and it
starts a fresh broker from this repository for each suite, configured like the broker that suite's own CI uses,
runs the suite and prints one JSON line per suite (passed / failed / skipped / errors and the failing tests).

    .venv/bin/python -m bench.client_suites.run \
        --aiokafka /work/clients/aiokafka --aiokafka-python /work/clients/venv-aiokafka/bin/python \
        --kafka-python /work/clients/kafka-python --kafka-python-python /work/clients/venv-kafka-python/bin/python \
        --librdkafka /work/clients/librdkafka --librdkafka-tests 0081,0001,0002

How each suite is pointed at our broker (nothing in the checkouts is changed):

- aiokafka: `aiokafka_plugin.py` replaces the Docker fixtures of its `tests/conftest.py`; the tests that need
  the container's SSL listener, JAAS users, KDC or CLI tools are skipped with that reason. Runs only the tests
  that use a broker. aiokafka thinks it talks to Kafka 2.8.1, the newest broker its CI tests.
- kafka-python: its fixtures take an external broker from KAFKA_URI; KAFKA_VERSION=4.2.0 (the release whose
  API table we serve). Its SASL tests run against the plain listener; its SSL tests start their own Kafka with
  `kafka-storage.sh`, so `kafka_python_plugin.py` hands them a second broker with an SSL listener instead.
- librdkafka: `tests/test-runner` (built with `make -C tests build`) with a test.conf naming the bootstrap,
  one test number at a time; a 3-broker cluster (`--librdkafka-cluster`, as its trivup CI runs) or one node.

Needs the client venvs described in README's bench section. Takes minutes to an hour on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from controlplane.apache_kafka import runtime
from tests.fixtures.apache_kafka import ApacheKafkaCluster
from tests.fixtures.broker import BrokerProcess, CertificateFiles, free_port
from tests.fixtures.cluster import start_cluster

HERE = Path(__file__).resolve().parent

# What each client's CI runs its reference broker with (aiokafka's docker image, kafka-python's
# servers/resources/default/kafka.properties, librdkafka's trivup scenario `default`).
# Both Python suites assume broker id 0 (Kafka's docker image and kafka-python's fixture number it so).
AIOKAFKA_BROKER = {"node.id": "0", "num.partitions": "2", "group.initial.rebalance.delay.ms": "0"}
KAFKA_PYTHON_BROKER = {
    "node.id": "0",
    "num.partitions": "4",
    "offsets.topic.num.partitions": "2",
    "group.min.session.timeout.ms": "1000",
    "group.initial.rebalance.delay.ms": "0",
    "authorizer.class.name": "acl",
    "allow.everyone.if.no.acl.found": "true",
}
# confluent-kafka-python's TestUtils.broker_conf() for trivup (its RF 1 internal topics are our defaults).
# trivup's KafkaBrokerApp adds an authorizer that allows everyone (its ACL tests create and describe ACLs).
CONFLUENT_KAFKA_BROKER = {
    "num.partitions": "1",
    "auto.create.topics.enable": "true",
    "authorizer.class.name": "acl",
    "allow.everyone.if.no.acl.found": "true",
    # Its share-group tests count on a 1 s acquisition lock (and a minimum that allows it).
    "group.share.record.lock.duration.ms": "1000",
    "group.share.min.record.lock.duration.ms": "1000",
}
# franz-go's CI: apache/kafka's image defaults, SCRAM-SHA-256 on a second listener with one user.
FRANZ_GO_BROKER = {
    "sasl.enabled.mechanisms": "SCRAM-SHA-256",
    "sasl.bootstrap.users": "testuser:SCRAM-SHA-256:testpass",
}
# Kafka's own defaults for what our test fixtures shorten to keep tests fast (tests/fixtures/broker.py and
# cluster.py): a client suite judges the broker as users run it, so its cluster keeps production timings. With
# the fixtures' 1 s minimum session timeout and 2 s broker session, a loaded machine expired members and fenced
# nodes that Kafka would have kept.
KAFKA_DEFAULT_TIMINGS = {
    "group.min.session.timeout.ms": "6000",
    "group.max.session.timeout.ms": "1800000",
    "group.consumer.session.timeout.ms": "45000",
    "group.consumer.heartbeat.interval.ms": "5000",
    "offsets.topic.num.partitions": "50",
    "transaction.state.log.num.partitions": "50",
    "controller.quorum.election.timeout.ms": "1000",
    "broker.heartbeat.interval.ms": "2000",
    "broker.session.timeout.ms": "9000",
    "replica.lag.time.max.ms": "30000",
    "replica.fetch.wait.max.ms": "500",
    "replica.fetch.backoff.ms": "1000",
}
LIBRDKAFKA_BROKER = {
    **KAFKA_DEFAULT_TIMINGS,
    "num.partitions": "4",
    "auto.create.topics.enable": "true",
    # Kafka's default, which trivup keeps: 0118 needs both consumers in the group's first generation.
    "group.initial.rebalance.delay.ms": "3000",
    # Kafka's default too (our test clusters use 2): the tests produce with acks=all to RF 1 topics.
    "min.insync.replicas": "1",
    "authorizer.class.name": "acl",
    "allow.everyone.if.no.acl.found": "true",
    # Its CI's (.semaphore, tests/run-all-tests.sh): the share-consumer tests set a group's lock to 3 s and
    # wait for it to expire, which the default 15 s minimum refuses.
    "group.share.min.record.lock.duration.ms": "1000",
}


@contextmanager
def single_broker(work: Path, properties: dict[str, str]) -> Iterator[str]:
    broker = BrokerProcess(work, properties)
    # Set explicitly, as in the clients' reference configs (kafka-python checks it is a static config).
    broker.properties["advertised.listeners"] = broker.properties["listeners"]
    broker.start()
    try:
        yield broker.bootstrap
    finally:
        broker.kill9()


@contextmanager
def ssl_broker(work: Path, properties: dict[str, str]) -> Iterator[tuple[str, Path]]:
    """A broker with an SSL listener (server certificate only) beside its plain one: (SSL bootstrap, CA dir)."""
    ssl_dir = work / "ssl"
    certificates = CertificateFiles(ssl_dir)
    shutil.copy(certificates.ca_path, ssl_dir / "ca-cert")  # the file name kafka-python's SSL tests read
    broker = BrokerProcess(work, properties)
    ssl_port = free_port()
    listeners = f"{broker.properties['listeners']},SSL://127.0.0.1:{ssl_port}"
    broker.properties.update(
        {
            "listeners": listeners,
            "advertised.listeners": listeners,
            "ssl.keystore.location": str(certificates.keystore_path),
        }
    )
    broker.start()
    try:
        yield f"127.0.0.1:{ssl_port}", ssl_dir
    finally:
        broker.kill9()


@contextmanager
def three_brokers(work: Path, properties: dict[str, str]) -> Iterator[str]:
    cluster = start_cluster(work, size=3, properties=properties)
    try:
        yield cluster.bootstrap
    finally:
        cluster.stop()


# Our broker's short names for what Kafka names by class.
KAFKA_CLASS_NAMES = {
    "authorizer.class.name": {"acl": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}
}


def kafka_properties(properties: dict[str, str]) -> dict[str, str]:
    """The same broker properties for Apache Kafka (the oracle a suite's failure is checked against)."""
    return {name: KAFKA_CLASS_NAMES.get(name, {}).get(value, value) for name, value in properties.items()}


@contextmanager
def apache_kafka_brokers(work: Path, properties: dict[str, str], size: int) -> Iterator[str]:
    cluster = ApacheKafkaCluster(work, size, kafka_properties(properties))
    cluster.start()
    try:
        yield cluster.bootstrap
    finally:
        cluster.stop()


def junit_counts(path: Path) -> dict[str, object]:
    """Per test (a failure in the call and an error at teardown are one failed test)."""
    outcomes: dict[str, str] = {}
    messages: dict[str, str] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        tags = {child.tag for child in case}
        if tags & {"failure", "error"}:
            outcomes[name] = "failed"
            node = case.find("failure") if case.find("failure") is not None else case.find("error")
            messages.setdefault(
                name, (node.get("message") or "").splitlines()[0][:300] if node is not None else ""
            )
        elif outcomes.get(name) != "failed":
            outcomes[name] = "skipped" if "skipped" in tags else "passed"
    counts = {k: sum(1 for v in outcomes.values() if v == k) for k in ("passed", "failed", "skipped")}
    failures = [{"test": name, "message": messages[name]} for name, v in outcomes.items() if v == "failed"]
    return {**counts, "failures": failures}


def run_pytest(python: str, checkout: Path, args: list[str], env: dict[str, str], report: Path) -> dict:
    command = [python, "-m", "pytest", *args, "-q", "-p", "no:cacheprovider", f"--junitxml={report}"]
    started = time.monotonic()
    with report.with_suffix(".log").open("wb") as log:
        subprocess.run(
            command,
            cwd=checkout,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            check=False,
        )
    return {**junit_counts(report), "seconds": round(time.monotonic() - started)}


def run_aiokafka(args: argparse.Namespace, work: Path) -> dict:
    with single_broker(work / "aiokafka-broker", AIOKAFKA_BROKER) as bootstrap:
        env = {"STREAMHUB_BOOTSTRAP": bootstrap, "PYTHONPATH": str(HERE)}
        pytest_args = ["-p", "aiokafka_plugin", "--timeout=180", *(args.aiokafka_select or ["tests"])]
        return run_pytest(args.aiokafka_python, args.aiokafka, pytest_args, env, work / "aiokafka.xml")


def run_kafka_python(args: argparse.Namespace, work: Path) -> dict:
    kafka_root = work / "kafka-root"  # its fixture wants a Kafka install dir even for an external broker
    kafka_root.mkdir(exist_ok=True)
    with (
        single_broker(work / "kafka-python-broker", KAFKA_PYTHON_BROKER) as bootstrap,
        ssl_broker(work / "kafka-python-ssl-broker", KAFKA_PYTHON_BROKER) as (ssl_bootstrap, ssl_dir),
    ):
        env = {
            "KAFKA_URI": f"kafka://{bootstrap}",
            "KAFKA_VERSION": "4.2.0",
            "KAFKA_ROOT": str(kafka_root),
            "STREAMHUB_SSL_BOOTSTRAP": ssl_bootstrap,
            "STREAMHUB_SSL_DIR": str(ssl_dir),
            "PYTHONPATH": str(HERE),
        }
        pytest_args = [
            "-p",
            "kafka_python_plugin",
            "-o",
            "log_level=WARNING",
            "--timeout=180",
            *(args.kafka_python_select or ["test/integration"]),
        ]
        return run_pytest(
            args.kafka_python_python, args.kafka_python, pytest_args, env, work / "kafka-python.xml"
        )


def run_confluent_kafka(args: argparse.Namespace, work: Path) -> dict:
    # Its pytest fixtures take an external cluster from BROKERS (`ByoFixture`); the broker is configured as its
    # TestUtils.broker_conf() configures trivup's. Tests of the Schema Registry need SR_URL and are skipped
    # without it; the SASL ones always start their own trivup cluster.
    with single_broker(work / "confluent-kafka-broker", CONFLUENT_KAFKA_BROKER) as bootstrap:
        env = {"BROKERS": bootstrap, "PYTHONPATH": str(args.confluent_kafka)}
        if args.confluent_kafka_protocol == "consumer":
            env["TEST_CONSUMER_GROUP_PROTOCOL"] = "consumer"
        pytest_args = ["--timeout=300", *(args.confluent_kafka_select or ["tests/integration"])]
        return run_pytest(
            args.confluent_kafka_python, args.confluent_kafka, pytest_args, env, work / "confluent-kafka.xml"
        )


def run_franz_go(args: argparse.Namespace, work: Path) -> dict:
    """franz-go's kgo tests as its CI runs them (`KGO_TEST_RF=1`, a SCRAM-SHA-256 listener beside the plain
    one with the user testuser:testpass), from a test binary built with `go test -c`. With
    `--franz-go-cluster` the tests' seeds are a 3-node cluster with Kafka's default timings (`KGO_TEST_RF=3`);
    the two SCRAM tests (a ping and a Metadata request) still dial the single SCRAM broker."""
    broker = BrokerProcess(work / "franz-go-broker", FRANZ_GO_BROKER)
    scram_port = free_port()
    listeners = f"{broker.properties['listeners']},SASL_PLAINTEXT://127.0.0.1:{scram_port}"
    broker.properties.update({"listeners": listeners, "advertised.listeners": listeners})
    broker.start()
    cluster = None
    try:
        if args.franz_go_cluster:
            cluster = start_cluster(
                work / "franz-go-cluster",
                size=3,
                properties={**KAFKA_DEFAULT_TIMINGS, "auto.create.topics.enable": "true"},
            )
        env = {
            **os.environ,
            "KGO_SEEDS": cluster.bootstrap if cluster is not None else broker.bootstrap,
            "KGO_TEST_RF": "3" if cluster is not None else "1",
            "KGO_TEST_STABLE_FETCH": "true",
            "KGO_TEST_SCRAM_SEEDS": f"127.0.0.1:{scram_port}",
            "KGO_TEST_SCRAM": "testuser:testpass",
            "KGO_LOG_LEVEL": "none",
        }
        binary = args.franz_go_test_binary
        command = [str(binary), "-test.v", f"-test.timeout={args.franz_go_timeout}"]
        if args.franz_go_run:
            command.append(f"-test.run={args.franz_go_run}")
        started = time.monotonic()
        log = work / "franz-go.log"
        with log.open("wb") as out:
            subprocess.run(
                command, cwd=binary.parent, env=env, stdout=out, stderr=subprocess.STDOUT, check=False
            )
        return {
            **go_test_counts(verdict_lines(log)),
            "seconds": round(time.monotonic() - started),
        }
    finally:
        if cluster is not None:
            cluster.stop()
        broker.kill9()


def verdict_lines(log: Path) -> str:
    """The lines of a `-test.v` log that say what ran and failed (a failing test can log millions of others)."""
    with log.open(errors="replace") as lines:
        return "".join(
            line
            for line in lines
            if line.startswith(("=== RUN", "=== CONT", "=== NAME", "--- ", "    --- ")) or "_test.go:" in line
        )


GO_VERDICT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)", re.M)


def go_test_counts(log: str) -> dict[str, object]:
    """Top-level tests' verdicts from `-test.v` output; a panic or timeout fails the test that was running."""
    outcomes: dict[str, str] = {}
    for verdict, name in GO_VERDICT.findall(log):
        if "/" not in name:
            outcomes[name] = {"PASS": "passed", "FAIL": "failed", "SKIP": "skipped"}[verdict]
    started = re.findall(r"^=== RUN\s+(\S+)$", log, re.M)
    unfinished = [name for name in started if "/" not in name and name not in outcomes]
    for name in unfinished:  # the binary died (panic, -test.timeout) while these ran
        outcomes[name] = "failed"
    counts = {k: sum(1 for v in outcomes.values() if v == k) for k in ("passed", "failed", "skipped")}
    failures = [
        {"test": name, "message": _go_failure_message(log, name)}
        for name, v in outcomes.items()
        if v == "failed"
    ]
    return {**counts, "failures": failures}


# Which of a failed test's own lines say why (its progress lines and kgo's cleanup notes do not).
GO_FAILURE_WORDS = re.compile(r"fail|error|timed out|unexpected|expected|mismatch|panic", re.I)


def _go_failure_message(log: str, name: str) -> str:
    """What the test logged before its FAIL verdict: parallel tests' lines interleave, and `-test.v` marks each
    resumption (`=== CONT`/`=== NAME`), so only the lines since the last marker naming this test (or one of
    its sub-tests) are its own; of those, the ones that say what failed."""
    lines = log.splitlines()
    verdict = next((i for i, line in enumerate(lines) if line.startswith(f"--- FAIL: {name} ")), None)
    if verdict is None:
        return ""
    marker = re.compile(rf"^=== (RUN|CONT|NAME)\s+{re.escape(name)}(/\S*)?$")
    begin = next((i for i in range(verdict - 1, -1, -1) if marker.match(lines[i])), verdict)
    own = [line.strip() for line in lines[begin + 1 : verdict] if "_test.go:" in line]
    own += [
        line.strip() for line in lines[verdict + 1 :] if line.startswith("        ") and "_test.go:" in line
    ]
    telling = [line for line in own if GO_FAILURE_WORDS.search(line)] or own
    return " | ".join(telling[:3])[:300]


def run_librdkafka(args: argparse.Namespace, work: Path) -> dict:
    runner = runner_path(args)
    if not runner.exists():
        raise SystemExit(f"{runner} is missing: build it with `./configure && make && make -C tests build`")
    results: dict[str, str] = {}
    failures: list[dict[str, str]] = []
    declared = librdkafka_declared_tests(args.librdkafka)
    wanted = (
        sorted({number for number, _ in declared.values()})
        if args.librdkafka_tests == "all"
        else args.librdkafka_tests.split(",")
    )
    for scenario, numbers in scenario_runs(declared, wanted, args.librdkafka_scenarios.split(",")):
        properties = {**LIBRDKAFKA_BROKER, **SCENARIO_BROKER[scenario]}
        _run_librdkafka_tests(args, work / scenario, scenario, numbers, properties, results, failures)
    counts = {k: sum(1 for v in results.values() if v == k) for k in ("passed", "failed", "skipped")}
    return {**counts, "failures": failures, "results": results}


# Tests of the `noautocreate` scenario run against a second broker that does not create topics.
SCENARIO_BROKER: dict[str, dict[str, str]] = {
    "default": {},
    "noautocreate": {"auto.create.topics.enable": "false"},
}


def scenario_runs(
    declared: dict[str, tuple[str, set[str]]], wanted: list[str], chosen: list[str]
) -> list[tuple[str, list[str]]]:
    """The wanted numbers of each chosen scenario, in the order given, `default` first: a number with tests in
    both scenarios (0045) runs against both brokers, and the runner picks each test's own."""
    runs = []
    for scenario in SCENARIO_BROKER:
        numbers = [n for n in wanted if scenario in scenarios_of(declared, n)]
        if numbers and scenario in chosen:
            runs.append((scenario, numbers))
    return runs


def _run_librdkafka_tests(
    args: argparse.Namespace,
    work: Path,
    scenario: str,
    numbers: list[str],
    properties: dict[str, str],
    results: dict[str, str],
    failures: list[dict[str, str]],
) -> None:
    tests_dir = args.librdkafka / "tests"
    if args.librdkafka_engine == "kafka":
        brokers = apache_kafka_brokers(work / "brokers", properties, 3 if args.librdkafka_cluster else 1)
    else:
        brokers = (three_brokers if args.librdkafka_cluster else single_broker)(work / "brokers", properties)
    with brokers as bootstrap:
        conf = work / "test.conf"
        # Its CI's test budgets: test.c triples every test's timeout when CI is set (as on Semaphore). The
        # multiplier alone, not CI itself, which also loosens the latency and timer checks (0025, 0055, 0062).
        # The share-consumer tests need it: a share member hears its partitions a heartbeat interval (5 s)
        # after joining, from Kafka 4.2 as from ours, and 0170 and 0176 spend their whole 1x budget on that.
        conf.write_text(f"bootstrap.servers={bootstrap}\ntest.topic.random=true\ntest.timeout.multiplier=3\n")
        env = {
            **os.environ,
            "RDKAFKA_TEST_CONF": str(conf),
            "TEST_KAFKA_VERSION": "4.2.0",  # the release whose API table we serve: newer tests skip themselves
            "LD_LIBRARY_PATH": f"{args.librdkafka / 'src'}:{args.librdkafka / 'src-cpp'}",
            # Kafka's CLI scripts and Java producer (0052, 0077, 0098, 0109, 0115, 0119) from the installed jars.
            "KAFKA_PATH": str(kafka_path(work / "kafka-path")),
            "BROKERS": bootstrap,
        }
        if args.librdkafka_protocol == "consumer":
            env["TEST_CONSUMER_GROUP_PROTOCOL"] = "consumer"
        for number in numbers:
            log = work / f"{number}.log"
            with log.open("wb") as out:
                try:
                    subprocess.run(
                        # No quick mode (-Q): it skips every SUB_TEST() and still says PASSED.
                        # -E: no socket-emulation tests.
                        # -p1: one test at a time (a number declaring several runs them in parallel).
                        [str(runner_path(args)), "-E", "-p1", "-s", scenario, number],
                        cwd=tests_dir,
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        timeout=args.librdkafka_timeout,
                        check=False,
                    )
                except subprocess.TimeoutExpired:
                    out.write(b"\nTIMED OUT (run.py)\n")
            for name, (outcome, message) in librdkafka_outcomes(
                log.read_text(errors="replace"), number
            ).items():
                results[name] = outcome
                if outcome == "failed":
                    failures.append({"test": name, "message": message})
                print(f"librdkafka {name}: {outcome} {message}", file=sys.stderr, flush=True)


def runner_path(args: argparse.Namespace) -> Path:
    return args.librdkafka / "tests" / "test-runner"


def kafka_path(root: Path) -> Path:
    """A directory laid out as the release tarball's top directory as far as librdkafka's tests use it
    (`bin/<script>.sh`, `bin/kafka-run-class.sh`, `libs/`), its scripts running the installed jars."""
    installed = runtime.installation()
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    if not (root / "libs").exists():
        (root / "libs").symlink_to(installed.libs)
    # kafka-run-class.sh puts $CLASSPATH (librdkafka's java/ directory) before the release's jars.
    base = installed.command("MAIN")
    java, options = base[0], base[1 : base.index("-cp")]
    run_class = bin_dir / "kafka-run-class.sh"
    run_class.write_text(
        "#!/bin/sh\n"
        f'exec {java} {" ".join(options)} -cp "${{CLASSPATH:+$CLASSPATH:}}{installed.classpath}" "$@"\n'
    )
    scripts = {name: main for name, main in runtime.TOOL_MAIN_CLASSES.items() if name.startswith("kafka-")}
    for name, main in scripts.items():
        (bin_dir / f"{name}.sh").write_text(f'#!/bin/sh\nexec {run_class} {main} "$@"\n')
    for script in bin_dir.iterdir():
        script.chmod(0o755)
    return root


TEST_DECLARATION = re.compile(r"_TEST\(\s*((\d{4})\w*)\s*,\s*([^,)]*)(.*?)\)\s*,?\s*$", re.S)


def librdkafka_declared_tests(checkout: Path) -> dict[str, tuple[str, set[str]]]:
    """Every test tests/test.c declares that needs a broker (not TEST_F_LOCAL): its number and scenarios."""
    source = (checkout / "tests" / "test.c").read_text()
    table = source[source.index("struct test tests[]") :]
    table = table[: table.index("{NULL}")]
    table = re.sub(r"/\*.*?\*/|^[ \t]*#[^\n]*", "", table, flags=re.S | re.M)  # comments, #if WITH_SOCKEM
    declared: dict[str, tuple[str, set[str]]] = {}
    for entry in re.split(r"\n\s*(?=_TEST\()", table):
        match = TEST_DECLARATION.match(entry.strip())
        if match is None or "TEST_F_LOCAL" in match.group(3):
            continue
        scenario = re.search(r'\.scenario\s*=\s*"([^"]+)"', match.group(4))
        scenarios = set(scenario.group(1).split(",")) if scenario else {"default"}
        declared[match.group(1)] = (match.group(2), scenarios)
    return declared


def scenarios_of(declared: dict[str, tuple[str, set[str]]], number: str) -> set[str]:
    found = {s for n, scenarios in declared.values() if n == number for s in scenarios}
    return found & {"default", "noautocreate"} or {"default"}


ANSI = re.compile(r"\x1b\[[0-9;]*m")
VERDICT = re.compile(r"=+ Test (\S+) (PASSED|FAILED|SKIPPED) =+")
SKIPPING = re.compile(r"\[(\d{4}\S*)\s*/[^]]*\] SKIPPING TEST: (.*)")
FAILURE = re.compile(r"### Test \"(\d{4}\S*?)[ \"].*?###\n(.*)")


def librdkafka_outcomes(log: str, number: str) -> dict[str, tuple[str, str]]:
    """Each test the runner ran for `number` (0045 is several) and its outcome, read from its stderr:
    the runner's summary goes to stdout, which an abort at exit (its own, after "ALL TESTS PASSED")
    loses. A test with a failure message but no verdict aborted the runner: failed."""
    text = ANSI.sub("", log)
    outcomes: dict[str, tuple[str, str]] = {}
    reasons = {name: reason.strip() for name, reason in SKIPPING.findall(text)}
    messages: dict[str, str] = {}
    for name, message in FAILURE.findall(text):
        messages.setdefault(name, message.strip()[:300])
    for name, verdict in VERDICT.findall(text):
        outcome = {"PASSED": "passed", "FAILED": "failed", "SKIPPED": "skipped"}[verdict]
        outcomes[name] = (outcome, messages.get(name, reasons.get(name, "")))
    for name, reason in reasons.items():
        outcomes.setdefault(name, ("skipped", reason))
    for name, message in messages.items():
        outcomes.setdefault(name, ("failed", message))
    if not outcomes:
        if "ALL TESTS PASSED" in text:  # nothing ran: the test is not for this scenario
            outcomes[number] = ("skipped", "not run by the runner in this scenario")
        else:
            last = text.strip().splitlines()[-1] if text.strip() else "no output"
            outcomes[number] = ("failed", last[:300])
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--aiokafka", type=Path)
    parser.add_argument("--aiokafka-python", default="python3")
    parser.add_argument("--aiokafka-select", nargs="*", help="test paths/ids (default: tests)")
    parser.add_argument("--kafka-python", type=Path)
    parser.add_argument("--kafka-python-python", default="python3")
    parser.add_argument("--kafka-python-select", nargs="*", help="test paths/ids (default: test/integration)")
    parser.add_argument("--confluent-kafka", type=Path, help="a confluent-kafka-python checkout")
    parser.add_argument("--confluent-kafka-python", default="python3", help="with confluent-kafka installed")
    parser.add_argument(
        "--confluent-kafka-select", nargs="*", help="test paths/ids (default: tests/integration)"
    )
    parser.add_argument("--confluent-kafka-protocol", choices=("classic", "consumer"), default="classic")
    parser.add_argument("--franz-go-test-binary", type=Path, help="`go test -c` of franz-go's pkg/kgo")
    parser.add_argument("--franz-go-run", help="-test.run pattern (default: every test)")
    parser.add_argument("--franz-go-timeout", default="30m")
    parser.add_argument("--franz-go-cluster", action="store_true", help="3 nodes, Kafka's default timings")
    parser.add_argument("--librdkafka", type=Path)
    parser.add_argument(
        "--librdkafka-tests",
        default="0081",
        help="comma-separated test numbers, or `all` (every non-local test)",
    )
    parser.add_argument(
        "--librdkafka-protocol",
        choices=("classic", "consumer"),
        default="classic",
        help="consumer group protocol",
    )
    parser.add_argument(
        "--librdkafka-scenarios",
        default="default,noautocreate",
        help="the trivup scenarios to run (comma-separated): `noautocreate` alone skips 0045's default tests",
    )
    parser.add_argument("--librdkafka-cluster", action="store_true", help="3 brokers, as librdkafka's CI")
    parser.add_argument(
        "--librdkafka-engine",
        choices=("ours", "kafka"),
        default="ours",
        help="run the tests against Apache Kafka instead (same properties), to tell a broker's fault from the test's",
    )
    parser.add_argument("--librdkafka-timeout", type=float, default=600.0, help="seconds per test number")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, junit files)")
    args = parser.parse_args()
    # A SIGTERM unwinds like Ctrl-C: the brokers this started are stopped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    work = Path(tempfile.mkdtemp(prefix="client-suites-"))
    suites = [
        ("aiokafka", args.aiokafka, run_aiokafka),
        ("kafka-python", args.kafka_python, run_kafka_python),
        ("confluent-kafka-python", args.confluent_kafka, run_confluent_kafka),
        ("franz-go", args.franz_go_test_binary, run_franz_go),
        ("librdkafka", args.librdkafka, run_librdkafka),
    ]
    try:
        for name, checkout, run in suites:
            if checkout is None:
                continue
            result = run(args, work)
            print(json.dumps({"suite": name, **result}), flush=True)
    finally:
        if args.keep:
            print(f"logs in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
