"""Apache Kafka as installed from Maven Central by scripts/bootstrap.sh (jvm/apache-kafka/pom.xml).

No Django here: the `apache-kafka` engine's provisioner, the conformance oracle and the JVM ecosystem tests
all start Kafka's broker, controller and tools through `runtime`.
"""
