from rest_framework.routers import SimpleRouter

from controlplane.lag.api import views

router = SimpleRouter()
router.register("lag/groups", views.GroupLagViewSet)

urlpatterns = router.urls
