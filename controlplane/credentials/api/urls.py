from rest_framework.routers import SimpleRouter

from controlplane.credentials.api import views

router = SimpleRouter()
router.register("scram-credentials", views.ScramCredentialViewSet)

urlpatterns = router.urls
