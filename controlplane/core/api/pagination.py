from rest_framework.pagination import LimitOffsetPagination


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """`?limit=&offset=`, with a ceiling so one request cannot ask for a whole table."""

    max_limit = 500
