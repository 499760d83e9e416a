import pytest

from broker.metadata.producer_ids import BLOCK_SIZE, ProducerIdManager
from broker.metadata.topic_names import topic_name_problem
from broker.metadata.topic_registry import MetadataStore, TopicCollision, TopicExists, UnknownTopic


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


def test_producer_ids_never_repeat_after_a_restart(tmp_path):
    first = ProducerIdManager(tmp_path)
    first.load()
    issued = {first.new_producer_id() for _ in range(10)}
    second = ProducerIdManager(tmp_path)
    second.load()  # a crash skips the rest of the reserved block, never reuses it
    later = {second.new_producer_id() for _ in range(BLOCK_SIZE + 5)}
    assert not issued & later
    assert len(later) == BLOCK_SIZE + 5


def test_an_epoch_bump_keeps_the_producer_id(tmp_path):
    manager = ProducerIdManager(tmp_path)
    manager.load()
    producer_id, epoch = manager.init_producer()
    assert manager.init_producer(producer_id, epoch) == (producer_id, epoch + 1)
