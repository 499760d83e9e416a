"""bench/client_suites/run.py picks which of librdkafka's numbered tests run against which trivup scenario's
broker: a wrong pick runs a `noautocreate` test against a broker that creates topics (and it passes for the
wrong reason) or silently drops a scenario from the counts."""

from __future__ import annotations

from pathlib import Path

from bench.client_suites.run import librdkafka_declared_tests, scenario_runs

# The shape of librdkafka's tests/test.c table: a local test, a test in both scenarios, one in the second only.
TEST_TABLE = """
struct test tests[] = {
    _TEST(0001_multiobj, 0),
    _TEST(0009_mock_cluster, TEST_F_LOCAL),
    _TEST(0045_subscribe_update, 0, TEST_BRKVER_TOPIC_ADMINAPI),
    _TEST(0045_subscribe_update_non_exist_and_partchange,
          0,
          TEST_BRKVER(2, 0, 0, 0),
          .scenario = "noautocreate"),
    _TEST(0107_topic_recreate, 0, .scenario = "noautocreate"),
    {NULL}};
"""


def _declared(tmp_path: Path) -> dict[str, tuple[str, set[str]]]:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test.c").write_text(TEST_TABLE)
    return librdkafka_declared_tests(tmp_path)


def test_a_number_with_tests_in_both_scenarios_runs_against_both_brokers(tmp_path: Path) -> None:
    declared = _declared(tmp_path)
    assert "0009_mock_cluster" not in declared
    runs = scenario_runs(declared, ["0107", "0045", "0001"], ["default", "noautocreate"])
    assert runs == [("default", ["0045", "0001"]), ("noautocreate", ["0107", "0045"])]


def test_choosing_one_scenario_runs_only_its_tests(tmp_path: Path) -> None:
    declared = _declared(tmp_path)
    assert scenario_runs(declared, ["0001", "0045", "0107"], ["noautocreate"]) == [
        ("noautocreate", ["0045", "0107"])
    ]
    assert scenario_runs(declared, ["0107"], ["default"]) == []
