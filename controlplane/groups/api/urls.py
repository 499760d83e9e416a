from rest_framework.routers import SimpleRouter

from controlplane.groups.api import views

router = SimpleRouter()
router.register("consumer-groups", views.ConsumerGroupViewSet)

urlpatterns = router.urls
