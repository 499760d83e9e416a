"""Which controller a broker sends to: hints with their Raft term, and controllers that stopped answering."""

from __future__ import annotations

import pytest

from broker.controller.client import ActiveController


def test_a_hint_from_an_older_term_never_replaces_a_newer_one() -> None:
    active = ActiveController()
    active.observe(1, term=3)
    assert active.leader_id == 1
    active.observe(2, term=2)  # a controller that has not heard of the election yet
    assert active.leader_id == 1
    active.observe(None, term=4)  # an election is on: nobody is known to lead term 4
    assert active.leader_id is None
    active.observe(3, term=4)
    assert active.leader_id == 3


def test_a_controller_that_stopped_answering_is_passed_over_until_a_newer_term_names_it() -> None:
    active = ActiveController()
    active.observe(1, term=3)
    active.lost(1)  # paused or dead
    assert active.leader_id is None
    active.observe(1, term=3)  # its peers still name it until their election timeout
    assert active.leader_id is None
    active.observe(1, term=5)  # re-elected after it came back
    assert active.leader_id == 1


def test_a_suspected_controller_that_answers_again_is_believed(monkeypatch: pytest.MonkeyPatch) -> None:
    active = ActiveController()
    active.observe(2, term=7)
    active.lost(2)  # one slow answer
    active.alive(2)  # it answered the next question
    active.observe(2, term=7)
    assert active.leader_id == 2
    # Suspicion also ends by itself.
    active.lost(2)
    clock = iter([1_000_000.0])
    monkeypatch.setattr("broker.controller.client.time.monotonic", lambda: next(clock))
    active.observe(2, term=7)
    assert active.leader_id == 2


def test_not_controller_from_the_believed_leader_forgets_it() -> None:
    active = ActiveController()
    active.observe(1, term=2)
    active.not_active(3)
    assert active.leader_id == 1
    active.not_active(1)
    assert active.leader_id is None
