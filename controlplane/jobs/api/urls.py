from rest_framework.routers import SimpleRouter

from controlplane.jobs.api import views

router = SimpleRouter()
router.register("job-runs", views.JobRunViewSet)
router.register("streaming-jobs", views.StreamingJobViewSet)

urlpatterns = router.urls
