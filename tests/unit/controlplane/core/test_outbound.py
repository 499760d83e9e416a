"""Which addresses outbound posts refuse (no sockets: IP literals only, and the allowlist)."""

import ipaddress

import pytest

from controlplane.core.outbound import RefusedDestination, check_address, parse_networks, resolve

REFUSED = [
    "127.0.0.1", "127.8.9.10", "0.0.0.0", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254",
    "100.64.0.1", "224.0.0.1", "239.255.255.250", "255.255.255.255", "198.18.0.1",
    "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254",
    "::ffff:10.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1", "2002:a00:1::1",
]  # fmt: skip
ALLOWED = ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]


@pytest.mark.parametrize("address", REFUSED)
def test_internal_addresses_are_refused(address: str, settings) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    with pytest.raises(RefusedDestination, match="OUTBOUND_ALLOWED_NETWORKS"):
        check_address(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses_are_allowed(address: str, settings) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    check_address(ipaddress.ip_address(address))


def test_the_operators_allowlist_opens_exactly_its_networks(settings) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = parse_networks(["10.1.2.0/24", "127.0.0.1"])
    check_address(ipaddress.ip_address("10.1.2.77"))
    check_address(ipaddress.ip_address("127.0.0.1"))
    check_address(ipaddress.ip_address("::ffff:127.0.0.1"))
    with pytest.raises(RefusedDestination):
        check_address(ipaddress.ip_address("10.1.3.1"))
    with pytest.raises(RefusedDestination):
        check_address(ipaddress.ip_address("127.0.0.2"))


def test_a_bad_allowlist_entry_is_named() -> None:
    with pytest.raises(ValueError, match="'ten-dot'"):
        parse_networks(["ten-dot"])


@pytest.mark.parametrize(
    "url",
    ["ftp://93.184.216.34/x", "http:///path", "http://user:pw@93.184.216.34/", "http://93.184.216.34:99999/"],
)
def test_urls_that_are_not_plain_http_are_refused(url: str) -> None:
    with pytest.raises(RefusedDestination):
        resolve(url)


def test_a_literal_address_is_pinned_with_its_port_and_path(settings) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    destination = resolve("https://[2606:4700:4700::1111]:8443/hooks?a=1")
    assert (destination.address, destination.port, destination.target) == (
        "2606:4700:4700::1111",
        8443,
        "/hooks?a=1",
    )
