from tests.integration.lag.conftest import lag_redis  # noqa: F401 - the lag sampler's Redis
from tests.integration.topics.world import kafka_world  # noqa: F401 - the fixture, shared by the apps' tests
