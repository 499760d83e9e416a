"""The alert state machine without a database: pending → firing → resolved, hysteresis, re-notify, silences."""

from datetime import UTC, datetime, timedelta

from controlplane.alerts.choices import AlertState, Granularity, Metric, NotificationKind
from controlplane.alerts.conditions import RuleSpec, Subject
from controlplane.alerts.transitions import SilenceSpec, Transition, advance, forget

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
CLUSTER = 7


def _rule(**overrides) -> RuleSpec:
    values = {
        "id": 1,
        "name": "slow payments",
        "team_id": 3,
        "cluster_id": None,
        "group_pattern": "payments-*",
        "topic_pattern": "*",
        "granularity": Granularity.GROUP,
        "metric": Metric.LAG_SECONDS,
        "comparison": "gt",
        "threshold": 30.0,
        "resolve_threshold": None,
        "statuses": frozenset(),
        "for_seconds": 60,
        "renotify_interval_seconds": None,
        "send_resolved": True,
        "severity": "warning",
        "channel_ids": (1,),
    }
    return RuleSpec(**(values | overrides))


def _subject(value: float | None, status: str = "LAGGING") -> Subject:
    return Subject("payments-1", "payments-1", "", None, value, status, "lag grows")


class Timeline:
    """Feeds one subject's values to the state machine every 15 s, as sampling runs would."""

    def __init__(self, rule: RuleSpec, silences: list[SilenceSpec] | None = None) -> None:
        self.rule, self.silences, self.alert, self.at = rule, silences or [], None, T0

    def step(self, value: float | None, *, status: str = "LAGGING", after: float = 15) -> Transition:
        self.at += timedelta(seconds=after)
        transition = advance(self.rule, CLUSTER, self.alert, _subject(value, status), self.at, self.silences)
        self.alert = None if transition.discarded or transition.alert is None else transition.alert
        if self.alert is not None and self.alert.state == AlertState.RESOLVED:
            self.alert = None  # the next breach opens a new alert
        return transition

    def notices(self, values: list[float | None]) -> list[str | None]:
        return [self.step(value).notice for value in values]


def test_it_stays_quiet_while_the_value_is_below_the_threshold() -> None:
    assert Timeline(_rule()).notices([0, 10, 30]) == [None, None, None]


def test_it_fires_once_after_the_condition_held_for_the_duration() -> None:
    timeline = Timeline(_rule())
    first = timeline.step(45)
    assert first.created
    assert first.alert.state == AlertState.PENDING
    assert first.notice is None
    notices = timeline.notices([50, 55, 60, 65, 70, 80])
    assert notices == [None, None, None, NotificationKind.FIRING, None, None]
    assert timeline.alert.state == AlertState.FIRING
    assert timeline.alert.fired_at == T0 + timedelta(seconds=75)
    assert timeline.alert.notification_count == 1


def test_a_pending_alert_is_dropped_when_the_condition_clears_before_the_duration() -> None:
    timeline = Timeline(_rule())
    timeline.step(45)
    cleared = timeline.step(10)
    assert cleared.discarded
    assert cleared.notice is None
    assert timeline.step(45).created  # a fresh pending period starts


def test_a_zero_duration_fires_on_the_first_breach() -> None:
    transition = Timeline(_rule(for_seconds=0)).step(31)
    assert transition.created
    assert transition.alert.state == AlertState.FIRING
    assert transition.notice == NotificationKind.FIRING


def test_it_resolves_only_below_the_resolve_threshold() -> None:
    timeline = Timeline(_rule(for_seconds=0, resolve_threshold=10.0))
    timeline.step(40)
    assert timeline.notices([25, 12]) == [None, None]  # between the thresholds: still firing
    assert timeline.alert.state == AlertState.FIRING
    resolved = timeline.step(9)
    assert resolved.notice == NotificationKind.RESOLVED
    assert resolved.alert.state == AlertState.RESOLVED
    assert resolved.alert.resolved_at == timeline.at


def test_without_send_resolved_the_alert_resolves_silently() -> None:
    timeline = Timeline(_rule(for_seconds=0, send_resolved=False))
    timeline.step(40)
    resolved = timeline.step(5)
    assert resolved.alert.state == AlertState.RESOLVED
    assert resolved.notice is None


def test_it_reminds_at_the_renotify_interval_while_firing() -> None:
    timeline = Timeline(_rule(for_seconds=0, renotify_interval_seconds=60))
    assert timeline.step(40).notice == NotificationKind.FIRING
    notices = timeline.notices([40] * 8)  # 2 minutes at 15 s
    assert notices == [
        None,
        None,
        None,
        NotificationKind.REMINDER,
        None,
        None,
        None,
        NotificationKind.REMINDER,
    ]


def test_an_acknowledged_alert_gets_no_reminders_but_still_its_resolved_notice() -> None:
    timeline = Timeline(_rule(for_seconds=0, renotify_interval_seconds=60))
    timeline.step(40)
    timeline.alert.acknowledged_at = timeline.at
    assert timeline.notices([40] * 8) == [None] * 8
    assert timeline.step(0).notice == NotificationKind.RESOLVED


def test_an_unknown_value_neither_fires_nor_resolves() -> None:
    timeline = Timeline(_rule(for_seconds=0))
    timeline.step(40)
    unknown = timeline.step(None)
    assert unknown.notice is None
    assert timeline.alert.state == AlertState.FIRING
    assert timeline.alert.value == 40  # the last known value is kept


def _silence(**overrides) -> SilenceSpec:
    values = {
        "id": 9,
        "team_id": 3,
        "cluster_id": None,
        "group_pattern": "payments-*",
        "topic_pattern": "*",
        "rule_id": None,
        "severity": "",
        "starts_at": T0,
        "ends_at": T0 + timedelta(minutes=10),
    }
    return SilenceSpec(**(values | overrides))


def test_a_matching_silence_suppresses_the_firing_notice_but_the_alert_fires() -> None:
    timeline = Timeline(_rule(for_seconds=0), silences=[_silence()])
    fired = timeline.step(40)
    assert fired.alert.state == AlertState.FIRING
    assert fired.notice == NotificationKind.FIRING
    assert fired.silence is not None
    assert fired.silence.id == 9
    assert fired.alert.silenced_by_id == 9
    assert fired.alert.notification_count == 0


def test_when_the_silence_ends_the_firing_notice_goes_out() -> None:
    timeline = Timeline(_rule(for_seconds=0), silences=[_silence(ends_at=T0 + timedelta(seconds=40))])
    timeline.step(40)
    still = timeline.step(40)  # 30 s: still silenced, and no repeated notice is due
    assert still.notice is None
    assert timeline.alert.silenced_by_id == 9
    after = timeline.step(40)  # 45 s: the silence is over
    assert after.notice == NotificationKind.FIRING
    assert after.silence is None
    assert timeline.alert.silenced_by_id is None
    assert timeline.alert.notification_count == 1


def test_an_alert_never_announced_resolves_without_a_notice() -> None:
    timeline = Timeline(_rule(for_seconds=0), silences=[_silence()])
    timeline.step(40)
    resolved = timeline.step(0)
    assert resolved.alert.state == AlertState.RESOLVED
    assert resolved.notice is None


def test_silence_matchers_must_all_match() -> None:
    rule = _rule(for_seconds=0)
    for silence in [
        _silence(group_pattern="orders-*"),
        _silence(rule_id=2),
        _silence(severity="critical"),
        _silence(team_id=4),
        _silence(cluster_id=8),
        _silence(topic_pattern="orders"),  # a group-wide alert matches only an any-topic matcher
        _silence(starts_at=T0 + timedelta(hours=1), ends_at=T0 + timedelta(hours=2)),
    ]:
        fired = Timeline(rule, silences=[silence]).step(40)
        assert fired.silence is None, silence
    assert (
        Timeline(rule, silences=[_silence(rule_id=1, severity="warning", cluster_id=CLUSTER)])
        .step(40)
        .silence
    )


def test_status_rules_fire_on_the_named_statuses_and_resolve_when_they_end() -> None:
    timeline = Timeline(
        _rule(metric=Metric.STATUS, threshold=None, statuses=frozenset({"STALLED"}), for_seconds=30)
    )
    assert timeline.step(0, status="LAGGING").alert is None
    assert timeline.step(0, status="STALLED").created
    assert timeline.step(0, status="STALLED").notice is None
    assert timeline.step(0, status="STALLED").notice == NotificationKind.FIRING
    assert timeline.step(0, status="OK").notice == NotificationKind.RESOLVED


def test_falling_comparisons_use_the_resolve_threshold_above_the_threshold() -> None:
    timeline = Timeline(
        _rule(
            metric=Metric.LAG_MESSAGES, comparison="lt", threshold=10.0, resolve_threshold=20.0, for_seconds=0
        )
    )
    assert timeline.step(5).notice == NotificationKind.FIRING
    assert timeline.step(15).notice is None
    assert timeline.step(20).notice == NotificationKind.RESOLVED


def test_forgetting_drops_a_pending_alert_and_quietly_resolves_a_firing_one() -> None:
    timeline = Timeline(_rule())
    pending = timeline.step(45).alert
    assert forget(pending, T0, "gone").discarded
    firing = Timeline(_rule(for_seconds=0)).step(45).alert
    forgotten = forget(firing, T0 + timedelta(minutes=1), "The group is no longer observed.")
    assert not forgotten.discarded
    assert forgotten.notice is None
    assert firing.state == AlertState.RESOLVED
    assert firing.reason == "The group is no longer observed."
