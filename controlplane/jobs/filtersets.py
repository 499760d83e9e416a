import django_filters

from controlplane.jobs.choices import JobName, RunState
from controlplane.jobs.models import JobRun


class JobRunFilterSet(django_filters.FilterSet):
    state = django_filters.ChoiceFilter(choices=RunState.choices)
    job = django_filters.ChoiceFilter(choices=JobName.choices)

    class Meta:
        model = JobRun
        fields = ["team", "cluster", "state", "job"]
