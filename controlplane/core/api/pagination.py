import re
from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

_DIGITS = re.compile(r"[0-9]+")


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """`?limit=&offset=`, with a ceiling so one request cannot ask for a whole table. A value that is not a
    number of the documented range is refused (400); DRF's own pagination read it as "the first page", so a
    script with a typo looped over page one forever."""

    max_limit = 500

    def get_limit(self, request: Request) -> int:
        limit = self._whole_number(request, self.limit_query_param, minimum=1)
        return self.default_limit if limit is None else min(limit, self.max_limit)

    def get_offset(self, request: Request) -> int:
        offset = self._whole_number(request, self.offset_query_param, minimum=0)
        return 0 if offset is None else offset

    @staticmethod
    def _whole_number(request: Request, name: str, *, minimum: int) -> int | None:
        if name not in request.query_params:
            return None
        value = request.query_params[name]
        if not _DIGITS.fullmatch(value) or int(value) < minimum:
            raise ValidationError({name: [f"A whole number of at least {minimum} is required."]})
        return int(value)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.limit_query_param:
                parameter["schema"]["minimum"] = 1
                parameter["description"] = f"Number of results to return per page (at most {self.max_limit})."
            elif parameter["name"] == self.offset_query_param:
                parameter["schema"]["minimum"] = 0
        return parameters
