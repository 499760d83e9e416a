from rest_framework.routers import SimpleRouter

from controlplane.quotas.api import views

router = SimpleRouter()
router.register("quotas", views.ClientQuotaViewSet)

urlpatterns = router.urls
