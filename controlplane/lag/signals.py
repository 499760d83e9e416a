"""What the lag app announces to the apps that build on it, without importing them.

`sampling_run_finished` is sent with `run` (a SamplingRun) once a run's samples are stored; alerting
connects its evaluation in its AppConfig.ready. A deployment without alerting simply has no receiver.
"""

from django.dispatch import Signal

sampling_run_finished = Signal()
