from rest_framework.routers import SimpleRouter

from controlplane.replication.api import views

router = SimpleRouter()
router.register("replication-flows", views.ReplicationFlowViewSet)

urlpatterns = router.urls
