"""Cluster throughput from the sampler's log-end history: messages per second between consecutive runs,
in total and per topic.

A rate is Δ(summed log-end offsets) / Δt over the partitions seen in both runs. A partition that appears or
disappears between two runs, or whose log end went backwards (its topic was deleted and recreated), is left
out of that interval: counting it would show a spike (or a negative rate) that no producer caused.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise


@dataclass(frozen=True)
class TopicThroughput:
    topic: str
    messages_per_second: list[float]


@dataclass(frozen=True)
class Throughput:
    times: list[float]  # unix seconds: the end of each interval
    messages_per_second: list[float]
    by_topic: list[TopicThroughput]  # busiest first (by messages over the whole range)


def throughput(history: dict[str, list[tuple[float, int]]]) -> Throughput:
    """`history` is `history.log_end_history`: per "topic/partition", its (time, log-end offset) points."""
    ends_at: dict[float, dict[str, int]] = {}
    for key, points in history.items():
        for time, end in points:
            ends_at.setdefault(time, {})[key] = end
    run_times = sorted(ends_at)
    topics = sorted({key.rsplit("/", 1)[0] for key in history})
    per_topic: dict[str, list[float]] = {topic: [] for topic in topics}
    totals: list[float] = []
    # Run times are distinct (dictionary keys), so every interval has a positive length.
    for before, after in pairwise(run_times):
        elapsed = after - before
        moved = dict.fromkeys(topics, 0)
        previous, current = ends_at[before], ends_at[after]
        for key, end in current.items():
            start = previous.get(key)
            if start is None or end < start:
                continue
            moved[key.rsplit("/", 1)[0]] += end - start
        for topic in topics:
            per_topic[topic].append(moved[topic] / elapsed)
        totals.append(sum(moved.values()) / elapsed)
    busiest = sorted(topics, key=lambda topic: (-sum(per_topic[topic]), topic))
    return Throughput(
        times=run_times[1:],
        messages_per_second=totals,
        by_topic=[TopicThroughput(topic, per_topic[topic]) for topic in busiest],
    )
