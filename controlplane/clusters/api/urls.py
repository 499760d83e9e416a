from rest_framework.routers import SimpleRouter

from controlplane.clusters.api import views

router = SimpleRouter()
router.register("clusters", views.ClusterViewSet)
router.register("operations", views.OperationViewSet)

urlpatterns = router.urls
