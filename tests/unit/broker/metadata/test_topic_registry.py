import pytest

from broker.metadata.topic_names import topic_name_problem
from broker.metadata.topic_registry import (
    MetadataStore,
    TopicCollision,
    TopicExists,
    TopicsView,
    UnknownTopic,
)


def test_topics_survive_a_reload(tmp_path):
    store = MetadataStore(tmp_path)
    store.load()
    created = store.create_topic("orders", 3, configs={"retention.ms": "10"})
    store.add_partitions("orders", 5)
    reloaded = MetadataStore(tmp_path)
    reloaded.load()
    topic = reloaded.get("orders")
    assert topic is not None
    assert topic.topic_id == created.topic_id
    assert topic.partitions == 5
    assert topic.leader_epochs == (0,) * 5
    assert topic.configs == {"retention.ms": "10"}
    assert reloaded.get_by_id(created.topic_id) == topic
    assert reloaded.cluster_id == store.cluster_id


def test_it_refuses_duplicates_and_dot_underscore_collisions(tmp_path):
    store = MetadataStore(tmp_path)
    store.load()
    store.create_topic("a.b", 1)
    with pytest.raises(TopicExists):
        store.create_topic("a.b", 1)
    with pytest.raises(TopicCollision):
        store.create_topic("a_b", 1)
    assert store.colliding_topic("a_b") == "a.b"


def test_deleting_forgets_the_topic_and_its_id(tmp_path):
    store = MetadataStore(tmp_path)
    store.load()
    topic = store.create_topic("gone", 1)
    store.delete_topic("gone")
    assert store.get("gone") is None
    assert store.get_by_id(topic.topic_id) is None
    with pytest.raises(UnknownTopic):
        store.delete_topic("gone")
    store.create_topic("gone", 2)  # the name is free again


def test_the_snapshot_is_replaced_atomically(tmp_path):
    store = MetadataStore(tmp_path)
    store.load()
    store.create_topic("x", 1)
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("name", ["", ".", "..", "a" * 250, "has space", "slash/", "ümlaut"])
def test_illegal_topic_names_are_explained(name):
    assert topic_name_problem(name) is not None


@pytest.mark.parametrize("name", ["orders", "a.b_c-D9", "x" * 249])
def test_legal_topic_names_pass(name):
    assert topic_name_problem(name) is None


def test_a_deletion_is_written_by_the_next_change_or_a_flush(tmp_path):
    store = MetadataStore(tmp_path)
    store.load()
    store.create_topic("first", 1)
    store.create_topic("second", 1)

    def listed() -> set[str]:
        reloaded = MetadataStore(tmp_path)
        reloaded.load()
        return {topic.name for topic in reloaded.topics()}

    store.delete_topic("first")
    assert store.get("first") is None
    assert listed() == {"first", "second"}  # the metadata log, not this file, holds deletions durably
    store.create_topic("third", 1)
    assert listed() == {"second", "third"}
    store.delete_topic("second")
    store.flush()
    assert listed() == {"third"}


def test_a_topics_view_is_built_once_per_metadata_change(tmp_path):
    store = MetadataStore(tmp_path)
    store.load()
    store.create_topic("orders", 3)
    builds = []

    def partition_counts(topics):
        builds.append(1)
        return {topic.name: topic.partitions for topic in topics}

    view = TopicsView(store, partition_counts)
    assert view() == {"orders": 3}
    assert view() is view()
    assert len(builds) == 1  # no change, no build
    store.add_partitions("orders", 5)
    assert view() == {"orders": 5}
    store.create_topic("payments", 1)
    assert view() == {"orders": 5, "payments": 1}
    store.set_topic_configs("payments", {"retention.ms": "10"})
    view()
    store.delete_topic("orders")  # a deletion is not written yet, but the view sees it
    assert view() == {"payments": 1}
    assert len(builds) == 5
