"""The one address policy of stores and redirects (serve/addresses.py; issue 24 item 2).

Table-driven over every range of IANA's IPv4 and IPv6 special-purpose registries: the first,
a middle and the last address of each are refused unless the registry calls the range globally
reachable; each non-global IPv4 range is refused in every IPv6 spelling that embeds it (mapped,
compatible, SIIT, NAT64, 6to4, Teredo), and each global one allowed in them; `allow_networks`
lets an address in, judged on the unwrapped IPv4. The hand-written table `VERDICTS` is the
oracle that does not come from the module's own tables: the addresses issue 24 found allowed
(`::a9fe:a9fe`, `64:ff9b::7f00:1`, `2002:a9fe:a9fe::1`, `::ffff:0:7f00:1`, `fec0::1`,
`192.88.99.1`...) failed it on the code before.
"""

from __future__ import annotations

import ipaddress

import pytest

from tlscope.serve.addresses import IPV4_SPECIAL, IPV6_SPECIAL, AddressPolicy, Special, special, unwrap

POLICY = AddressPolicy([])

VERDICTS = {
    # refused: issue 24's list
    "::127.0.0.1": False,
    "::a9fe:a9fe": False,
    "64:ff9b::a9fe:a9fe": False,
    "64:ff9b::7f00:1": False,
    "2002:a9fe:a9fe::1": False,
    "2002:7f00:1::": False,
    "::ffff:0:7f00:1": False,
    "fec0::1": False,
    "192.88.99.1": False,
    # refused: what was refused before, and more registry ranges
    "127.0.0.1": False,
    "::ffff:127.0.0.1": False,
    "169.254.169.254": False,
    "0.0.0.0": False,
    "::": False,
    "::1": False,
    "10.1.2.3": False,
    "172.31.255.255": False,
    "192.168.1.1": False,
    "100.64.0.1": False,
    "192.0.0.170": False,
    "192.0.2.1": False,
    "198.18.0.1": False,
    "198.51.100.7": False,
    "203.0.113.9": False,
    "224.0.0.1": False,
    "240.0.0.1": False,
    "255.255.255.255": False,
    "fe80::1": False,
    "fe80::1%eth0": False,
    "fd00::1": False,
    "fc00::1": False,
    "2001:db8::1": False,
    "3fff::1": False,
    "2001:2::1": False,
    "2001:10::1": False,
    "100::1": False,
    "5f00::1": False,
    "ff02::1": False,
    "64:ff9b:1::808:808": False,  # local-use NAT64: its layout is the translator's
    "2001:0:4136:e378:8000:63bf:80ff:fffe": False,  # Teredo, client 127.0.0.1
    "4000::1": False,  # outside 2000::/3: not allocated
    "not-an-address": False,
    # allowed: global
    "8.8.8.8": True,
    "1.1.1.1": True,
    "192.0.0.9": True,
    "192.31.196.1": True,
    "192.175.48.1": True,
    "2606:4700::1111": True,
    "2001:4860:4860::8888": True,
    "::ffff:8.8.8.8": True,
    "64:ff9b::808:808": True,
    "2002:808:808::1": True,
    "2001:1::1": True,
    "2001:4:112::1": True,
    "2001:20::1": True,
    "2620:4f:8000::1": True,
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7": True,  # Teredo, client 8.8.8.8
}


@pytest.mark.parametrize(("address", "allowed"), sorted(VERDICTS.items()))
def test_verdicts(address: str, allowed: bool) -> None:
    assert POLICY.allowed(address) is allowed


def _samples(entry: Special) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """First, middle and last address of the range that the registry files under this entry
    (an address inside a nested, more specific entry is that entry's)."""
    net = ipaddress.ip_network(entry.network)
    candidates = [net.network_address, net.network_address + net.num_addresses // 2, net.broadcast_address]
    return [a for a in candidates if special(a) == entry]


ALL = [*IPV4_SPECIAL, *IPV6_SPECIAL]


@pytest.mark.parametrize("entry", ALL, ids=[e.network for e in ALL])
def test_every_registry_range(entry: Special) -> None:
    samples = _samples(entry)
    assert samples, f"{entry.network}: no address of it is filed under it"
    for ip in samples:
        inner = unwrap(ip)
        if inner is not ip:  # an IPv4-carrying form: judged by its IPv4
            inner_entry = special(inner)
            expected = inner_entry.is_global if inner_entry is not None else True
        else:
            expected = entry.is_global
        assert POLICY.allowed(str(ip)) is expected, (ip, inner, entry)


def _wrapped(v4: ipaddress.IPv4Address) -> dict[str, str]:
    n = int(v4)
    return {
        "mapped": str(ipaddress.IPv6Address((0xFFFF << 32) | n)),
        "compatible": str(ipaddress.IPv6Address(n)) if n > 1 else "::ffff:" + str(v4),
        "SIIT": str(ipaddress.IPv6Address((0xFFFF << 48) | n)),
        "NAT64": str(ipaddress.IPv6Address((0x64FF9B << 96) | n)),
        "6to4": str(ipaddress.IPv6Address((0x2002 << 112) | (n << 80) | 1)),
        "Teredo": str(ipaddress.IPv6Address((0x20010000 << 96) | (0x41364E37 << 64) | (~n & 0xFFFFFFFF))),
    }


@pytest.mark.parametrize("entry", IPV4_SPECIAL, ids=[e.network for e in IPV4_SPECIAL])
def test_every_ipv4_range_in_every_ipv6_spelling(entry: Special) -> None:
    for v4 in _samples(entry):
        for form, v6 in _wrapped(v4).items():  # type: ignore[arg-type]
            assert unwrap(ipaddress.IPv6Address(v6)) == v4, (form, v6)
            assert POLICY.allowed(v6) is entry.is_global, (form, v6, entry)


def test_allow_networks_is_the_only_way_in_and_judges_the_unwrapped_address() -> None:
    allow = AddressPolicy(["127.0.0.1/32", "fd00::/8"])
    for v6 in _wrapped(ipaddress.IPv4Address("127.0.0.1")).values():
        assert allow.allowed(v6), v6
    assert allow.allowed("fd12::1") and allow.allowed("127.0.0.1")
    assert not allow.allowed("127.0.0.2") and not allow.allowed("::ffff:127.0.0.2")
    assert not allow.allowed("64:ff9b:1::7f00:1")  # local-use NAT64: only by its own IPv6 address
    assert AddressPolicy(["64:ff9b:1::/48"]).allowed("64:ff9b:1::7f00:1")


def test_the_socket_factory_refuses_before_a_socket_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from tlscope.serve.addresses import Refused

    made: list[object] = []
    monkeypatch.setattr(socket, "socket", lambda *a, **k: made.append(a) or object())
    info = (socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("::127.0.0.1", 80, 0, 0))
    with pytest.raises(Refused):
        POLICY.socket_factory(info)
    assert made == []
    POLICY.socket_factory((socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("8.8.8.8", 80)))
    assert len(made) == 1
