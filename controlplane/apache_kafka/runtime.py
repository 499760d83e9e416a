"""Where the installed Apache Kafka lives and how its programs are started.

scripts/bootstrap.sh lays each version out as Kafka's release tarball does (see jvm/apache-kafka/pom.xml):
`<APACHE_KAFKA_HOME>/<version>/libs` (one classpath: broker, tools, Streams, Connect, MirrorMaker 2,
log4j2), `plugins/` (Connect plugins off the worker classpath) and `agents/` (the Prometheus JMX exporter).
The pinned version is the pom's `kafka.version`; other versions installed beside it (run the pom with
`-Dkafka.version=…`) are usable too.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
POM = REPO_ROOT / "jvm" / "apache-kafka" / "pom.xml"
BROKER_MAIN = "kafka.Kafka"
STORAGE_TOOL_MAIN = "kafka.tools.StorageTool"
# The main class behind each bin/<script>.sh of the pinned release (checked against its jars: AclCommand moved
# from kafka.admin to kafka-tools in 4.0, ConfigCommand is still the Scala one in kafka_2.13).
TOOL_MAIN_CLASSES = {
    "kafka-acls": "org.apache.kafka.tools.AclCommand",
    "kafka-configs": "kafka.admin.ConfigCommand",
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-delegation-tokens": "org.apache.kafka.tools.DelegationTokenCommand",
    "kafka-features": "org.apache.kafka.tools.FeatureCommand",
    "kafka-get-offsets": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-leader-election": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-log-dirs": "org.apache.kafka.tools.LogDirsCommand",
    "kafka-metadata-quorum": "org.apache.kafka.tools.MetadataQuorumCommand",
    "kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-transactions": "org.apache.kafka.tools.TransactionsCommand",
    "kafka-verifiable-consumer": "org.apache.kafka.tools.VerifiableConsumer",
    "kafka-verifiable-producer": "org.apache.kafka.tools.VerifiableProducer",
    "connect-distributed": "org.apache.kafka.connect.cli.ConnectDistributed",
    "connect-mirror-maker": "org.apache.kafka.connect.mirror.MirrorMaker",
}
# JVM options the release's kafka-run-class.sh sets, minus the GC log (a file per start) and JMX's remote port.
BASE_JVM_OPTIONS = (
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-Djava.awt.headless=true",
)
_VERSION_PATTERN = re.compile(r"<kafka\.version>([^<]+)</kafka\.version>")


class ApacheKafkaNotInstalled(RuntimeError):
    """The requested version is not under APACHE_KAFKA_HOME, or there is no Java 17+."""


def pinned_version() -> str:
    """The version scripts/bootstrap.sh installs (the pom's `kafka.version`)."""
    match = _VERSION_PATTERN.search(POM.read_text())
    if match is None:
        raise ApacheKafkaNotInstalled(f"{POM} names no kafka.version")
    return match.group(1)


def home() -> Path:
    """The directory that holds one subdirectory per installed version."""
    return Path(os.environ.get("APACHE_KAFKA_HOME") or REPO_ROOT / ".cache" / "apache-kafka")


def installed_versions() -> list[str]:
    """Versions whose libs/ holds the broker jar, oldest first."""
    if not home().is_dir():
        return []
    found = [entry.name for entry in home().iterdir() if any((entry / "libs").glob("kafka_2.13-*.jar"))]
    return sorted(
        found, key=lambda name: [int(part) if part.isdigit() else part for part in re.split(r"[.-]", name)]
    )


def java_binary() -> str:
    """`$JAVA_HOME/bin/java` when set, else `java` on PATH."""
    java_home = os.environ.get("JAVA_HOME")
    candidate = Path(java_home) / "bin" / "java" if java_home else None
    if candidate is not None and candidate.is_file():
        return str(candidate)
    found = shutil.which("java")
    if found is None:
        raise ApacheKafkaNotInstalled(
            "no Java: Apache Kafka needs Java 17 or newer (scripts/bootstrap.sh installs it)"
        )
    return found


@dataclass(frozen=True)
class Installation:
    version: str
    root: Path

    @property
    def libs(self) -> Path:
        return self.root / "libs"

    @property
    def plugins(self) -> Path:
        return self.root / "plugins"

    @property
    def jmx_exporter_agent(self) -> Path:
        return self.root / "agents" / "jmx_prometheus_javaagent.jar"

    @property
    def classpath(self) -> str:
        # A directory wildcard, as kafka-run-class.sh builds it: the JVM expands it itself.
        return str(self.libs / "*")

    def command(
        self,
        main_class: str,
        *args: str,
        heap: str | None = None,
        log4j_config: Path | None = None,
        jvm_options: tuple[str, ...] = (),
    ) -> list[str]:
        """The command line that runs `main_class` of this installation, as Kafka's bin/ scripts do.
        `heap` ("512m") sets -Xms and -Xmx; without a log4j configuration Kafka's programs log warnings
        and errors to stderr only."""
        options = list(BASE_JVM_OPTIONS)
        if heap:
            options += [f"-Xms{heap}", f"-Xmx{heap}"]
        if log4j_config is not None:
            options.append(f"-Dlog4j2.configurationFile={log4j_config}")
        else:
            options.append(f"-Dlog4j2.configurationFile={quiet_log4j_config()}")
        return [java_binary(), *options, *jvm_options, "-cp", self.classpath, main_class, *args]


def installation(version: str | None = None) -> Installation:
    """The installation of `version` (default: the pinned one); raises ApacheKafkaNotInstalled when absent."""
    version = version or pinned_version()
    root = home() / version
    if not any((root / "libs").glob("kafka_2.13-*.jar")):
        raise ApacheKafkaNotInstalled(
            f"Apache Kafka {version} is not installed under {home()} (scripts/bootstrap.sh installs "
            f"{pinned_version()}; another version: mvn -f {POM} package -Dkafka.version={version})"
        )
    return Installation(version=version, root=root)


def file_log4j_config(path: Path, log_file: Path, *, level: str = "INFO") -> Path:
    """Writes a log4j2 configuration that sends everything at `level` and above to `log_file` (one file per
    process, rolled at 50 MB, 3 kept), and returns `path`."""
    path.write_text(
        "\n".join(
            [
                f"rootLogger.level={level}",
                "rootLogger.appenderRef.file.ref=file",
                "appender.file.type=RollingFile",
                "appender.file.name=file",
                f"appender.file.fileName={log_file}",
                f"appender.file.filePattern={log_file}.%i",
                "appender.file.layout.type=PatternLayout",
                "appender.file.layout.pattern=[%d] %p %m (%c)%n",
                "appender.file.policies.type=Policies",
                "appender.file.policies.size.type=SizeBasedTriggeringPolicy",
                "appender.file.policies.size.size=50MB",
                "appender.file.strategy.type=DefaultRolloverStrategy",
                "appender.file.strategy.max=3",
                # The request logger and the state-change logger are as chatty as Kafka's own defaults keep them.
                "logger.request.name=kafka.request.logger",
                "logger.request.level=WARN",
                "",
            ]
        )
    )
    return path


def quiet_log4j_config() -> Path:
    """A shared configuration for short-lived tools: warnings and errors to stderr."""
    path = home() / "log4j2-tools.properties"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "\n".join(
                [
                    "rootLogger.level=WARN",
                    "rootLogger.appenderRef.stderr.ref=stderr",
                    "appender.stderr.type=Console",
                    "appender.stderr.name=stderr",
                    "appender.stderr.target=SYSTEM_ERR",
                    "appender.stderr.layout.type=PatternLayout",
                    "appender.stderr.layout.pattern=[%d] %p %m (%c)%n",
                    "",
                ]
            )
        )
    return path
