from rest_framework.routers import SimpleRouter

from controlplane.reconcile.api import views

router = SimpleRouter()
router.register("drift", views.DriftViewSet)
router.register("reconcile-runs", views.ReconcileRunViewSet)

urlpatterns = router.urls
