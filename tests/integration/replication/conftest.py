from tests.integration.topics.world import kafka_world  # noqa: F401 - the fixture, shared by the apps' tests
