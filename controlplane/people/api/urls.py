from django.urls import path
from rest_framework.routers import SimpleRouter

from controlplane.people.api import views

router = SimpleRouter()
router.register("people", views.PersonViewSet, basename="person")

urlpatterns = [
    path("auth/password-links/inspect/", views.inspect_password_link, name="password-link-inspect"),
    path("auth/password-links/use/", views.use_password_link, name="password-link-use"),
    *router.urls,
]
