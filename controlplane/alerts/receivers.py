"""Alerting's side of the seams to the apps it builds on (connected in AlertsConfig.ready)."""

from typing import Any

from controlplane.alerts import evaluation
from controlplane.lag.observations import SamplingRun


def evaluate_sampling_run(sender: type, *, run: SamplingRun, **kwargs: Any) -> None:
    """Every lag sampling run advances the cluster's lag alerts (`lag.signals.sampling_run_finished`)."""
    # Looked up at call time, so the evaluation can be replaced (tests record what it is handed).
    evaluation.evaluate_alerts(run)
