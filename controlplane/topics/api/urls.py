from rest_framework.routers import SimpleRouter

from controlplane.topics.api import views

router = SimpleRouter()
router.register("topics", views.TopicViewSet)

urlpatterns = router.urls
