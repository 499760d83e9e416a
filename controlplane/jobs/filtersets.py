import django_filters

from controlplane.core.api.filters import ApiFilterSet
from controlplane.jobs.choices import JobName, RunState, StreamingJobName, StreamState
from controlplane.jobs.models import JobRun, StreamingJob


class JobRunFilterSet(ApiFilterSet):
    state = django_filters.ChoiceFilter(choices=RunState.choices)
    job = django_filters.ChoiceFilter(choices=JobName.choices)

    class Meta:
        model = JobRun
        fields = ["team", "cluster", "state", "job"]


class StreamingJobFilterSet(ApiFilterSet):
    state = django_filters.ChoiceFilter(choices=StreamState.choices)
    job = django_filters.ChoiceFilter(choices=StreamingJobName.choices)

    class Meta:
        model = StreamingJob
        fields = ["team", "cluster", "state", "job"]
