import redis
from django.http import Http404
from kombu.exceptions import OperationalError
from rest_framework import exceptions

from controlplane.core.api.errors import error_response_handler


def test_it_wraps_validation_errors_with_field_details() -> None:
    response = error_response_handler(exceptions.ValidationError({"name": ["This field is required."]}), {})

    assert response.status_code == 400
    assert response.data == {
        "error": {
            "code": "invalid",
            "message": "The request is not valid.",
            "details": {"name": ["This field is required."]},
        }
    }


def test_it_maps_not_found_to_the_error_shape() -> None:
    response = error_response_handler(Http404("secret detail"), {})

    assert response.status_code == 404
    assert response.data["error"]["code"] == "not_found"
    assert "secret" not in str(response.data)


def test_it_keeps_the_throttle_wait_in_the_details() -> None:
    response = error_response_handler(exceptions.Throttled(wait=12), {})

    assert response.status_code == 429
    assert response.data["error"]["code"] == "throttled"
    assert response.data["error"]["details"] == {"retry_after_seconds": 12}


def test_it_leaves_unexpected_errors_to_django() -> None:
    assert error_response_handler(RuntimeError("boom"), {}) is None


def test_an_unreachable_redis_is_a_503_not_a_500() -> None:
    response = error_response_handler(redis.ConnectionError("Error 111 connecting to 127.0.0.1:6390."), {})

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.data["error"]["code"] == "service_unavailable"
    assert "Redis" in response.data["error"]["message"]


def test_an_unreachable_task_queue_is_a_503() -> None:
    response = error_response_handler(OperationalError("Error 111 connecting to 127.0.0.1:6390."), {})

    assert response.status_code == 503
    assert response.data["error"]["code"] == "service_unavailable"
