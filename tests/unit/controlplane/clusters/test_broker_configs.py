import pytest

from controlplane.clusters.broker_configs import InvalidBrokerConfig, validate_broker_config


def problems_of(overrides: object) -> list[str]:
    with pytest.raises(InvalidBrokerConfig) as refused:
        validate_broker_config(overrides)
    return refused.value.problems


def test_it_accepts_known_kafka_properties_as_strings() -> None:
    normalized = validate_broker_config(
        {"num.partitions": 3, "auto.create.topics.enable": False, "log.cleaner.min.cleanable.ratio": "0.3"}
    )

    assert normalized == {
        "num.partitions": "3",
        "auto.create.topics.enable": "false",
        "log.cleaner.min.cleanable.ratio": "0.3",
    }


def test_it_refuses_a_name_kafka_does_not_know() -> None:
    assert problems_of({"num.partition": "3"}) == ["num.partition is not a known Kafka broker config."]


def test_it_refuses_properties_the_provisioner_sets() -> None:
    problems = problems_of({"listeners": "PLAINTEXT://0.0.0.0:9092", "log.dirs": "/"})

    assert problems == [
        "listeners is set by the provisioner and cannot be overridden.",
        "log.dirs is set by the provisioner and cannot be overridden.",
    ]


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("num.partitions", "three", "num.partitions must be an integer, not 'three'."),
        ("num.partitions", True, "num.partitions must be an integer, not True."),
        ("num.partitions", str(2**31), "num.partitions is out of range for a Kafka int."),
        ("log.retention.ms", str(2**63), "log.retention.ms is out of range for a Kafka long."),
        ("delete.topic.enable", "yes", "delete.topic.enable must be true or false."),
        (
            "log.cleaner.min.cleanable.ratio",
            "half",
            "log.cleaner.min.cleanable.ratio must be a number, not 'half'.",
        ),
        ("compression.type", "", "compression.type must not be empty."),
        ("num.partitions", ["3"], "num.partitions must be a single value."),
    ],
)
def test_it_refuses_a_value_of_the_wrong_type(name: str, value: object, problem: str) -> None:
    assert problems_of({name: value}) == [problem]


def test_it_refuses_a_line_break_that_would_smuggle_in_another_property() -> None:
    problems = problems_of({"compression.type": "lz4\nlisteners=PLAINTEXT://0.0.0.0:1"})

    assert problems == ["compression.type must not contain control characters."]


def test_it_refuses_anything_but_an_object() -> None:
    assert problems_of(["num.partitions=3"]) == [
        "Broker config must be an object of Kafka property names to values."
    ]
