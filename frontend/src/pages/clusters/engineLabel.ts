/** "Apache Kafka 4.2.0", "StreamHub broker", or what a registered cluster's detection could tell. */
export function engineLabel(cluster: { engine?: string; engine_version?: string }): string {
  const name =
    cluster.engine === "apache-kafka"
      ? "Apache Kafka"
      : cluster.engine === "streamhub"
        ? "StreamHub broker"
        : "engine not identified";
  return cluster.engine_version ? `${name} ${cluster.engine_version}` : name;
}
