from rest_framework.routers import SimpleRouter

from controlplane.audit.api import views

router = SimpleRouter()
router.register("audit-events", views.AuditEventViewSet)

urlpatterns = router.urls
