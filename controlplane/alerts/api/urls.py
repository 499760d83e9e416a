from rest_framework.routers import SimpleRouter

from controlplane.alerts.api import views

router = SimpleRouter()
router.register("alert-rules", views.AlertRuleViewSet)
router.register("alert-channels", views.NotificationChannelViewSet)
router.register("alert-silences", views.SilenceViewSet)
router.register("alerts", views.AlertViewSet)
router.register("alert-notifications", views.NotificationViewSet)

urlpatterns = router.urls
