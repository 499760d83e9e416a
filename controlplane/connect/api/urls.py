from rest_framework.routers import SimpleRouter

from controlplane.connect.api import views

router = SimpleRouter()
router.register("connect-clusters", views.ConnectClusterViewSet)
router.register("connectors", views.ConnectorViewSet)

urlpatterns = router.urls
