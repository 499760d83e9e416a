"""The client address the audit log records."""

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def _valid_ip(value: str) -> str | None:
    try:
        return str(ipaddress.ip_address(value.strip()))
    except ValueError:
        return None


def client_address(request: HttpRequest) -> str | None:
    """REMOTE_ADDR, unless a trusted proxy is configured (TRUST_X_FORWARDED_FOR): then the address that
    proxy appended last to X-Forwarded-For — earlier entries come from the client and can be forged."""
    if settings.TRUST_X_FORWARDED_FOR:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        if forwarded:
            address = _valid_ip(forwarded.split(",")[-1])
            if address is not None:
                return address
    return _valid_ip(request.META.get("REMOTE_ADDR", ""))
