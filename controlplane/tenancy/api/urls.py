from rest_framework.routers import SimpleRouter

from controlplane.tenancy.api import views

router = SimpleRouter()
router.register("organizations", views.OrganizationViewSet)
router.register("org-memberships", views.OrgMembershipViewSet)
router.register("teams", views.TeamViewSet)
router.register("memberships", views.MembershipViewSet)
router.register("prefixes", views.TeamPrefixViewSet)
router.register("policies", views.TeamPolicyViewSet)

urlpatterns = router.urls
