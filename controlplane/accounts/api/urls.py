from rest_framework.routers import SimpleRouter

from controlplane.accounts.api import views

router = SimpleRouter()
router.register("service-accounts", views.ServiceAccountViewSet)
router.register("api-keys", views.ApiKeyViewSet)

urlpatterns = router.urls
