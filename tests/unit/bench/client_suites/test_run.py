"""bench/client_suites/run.py picks which of librdkafka's numbered tests run against which trivup scenario's
broker: a wrong pick runs a `noautocreate` test against a broker that creates topics (and it passes for the
wrong reason) or silently drops a scenario from the counts."""

from __future__ import annotations

from pathlib import Path

from bench.client_suites.run import go_test_counts, librdkafka_declared_tests, scenario_runs, verdict_lines

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


# `-test.v` output of two parallel tests: B's lines come between A's, and A's verdict follows B's.
INTERLEAVED_GO_LOG = """=== RUN   TestA
=== PAUSE TestA
=== RUN   TestB
=== PAUSE TestB
=== CONT  TestA
    a_test.go:10: phase 1 done
=== CONT  TestB
    b_test.go:20: unexpected error: NOT_COORDINATOR
--- FAIL: TestB (1.00s)
=== NAME  TestA
    a_test.go:30: timed out: accepted 5, expected 9
    a_test.go:40: deleting topic t
--- FAIL: TestA (2.00s)
=== RUN   TestC
--- PASS: TestC (0.00s)
"""


def test_a_parallel_go_tests_failure_message_is_its_own_line_that_says_why(tmp_path: Path) -> None:
    log = tmp_path / "franz-go.log"
    log.write_text(INTERLEAVED_GO_LOG)
    counts = go_test_counts(verdict_lines(log))
    assert (counts["passed"], counts["failed"], counts["skipped"]) == (1, 2, 0)
    assert counts["failures"] == [
        {"test": "TestB", "message": "b_test.go:20: unexpected error: NOT_COORDINATOR"},
        {"test": "TestA", "message": "a_test.go:30: timed out: accepted 5, expected 9"},
    ]
