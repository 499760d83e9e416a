from rest_framework.routers import SimpleRouter

from controlplane.declarative.api import views

router = SimpleRouter()
router.register("declarative", views.DeclarativeViewSet, basename="declarative")
router.register("change-sets", views.ChangeSetViewSet)
router.register("managed-resources", views.ManagedResourceViewSet)

urlpatterns = router.urls
