from rest_framework.routers import SimpleRouter

from controlplane.acls.api import views

router = SimpleRouter()
router.register("acls", views.AclBindingViewSet)
router.register("access-grants", views.AccessGrantViewSet)

urlpatterns = router.urls
