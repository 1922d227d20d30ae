"""Which addresses a store (and each redirect it follows) may connect to: the one address policy.

An address is allowed only if a network of the store's `allow_networks` holds it, or it is
globally routable. Both are judged on the *unwrapped* address: an IPv6 address that carries an
IPv4 one (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, SIIT `::ffff:0:a.b.c.d`,
NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`, Teredo `2001:0:...` whose client is the last
32 bits inverted) is judged as that IPv4 address, since that is where the packets end up (a
translator or relay on the path delivers them there). `[::127.0.0.1]`, `64:ff9b::a9fe:a9fe` and
`2002:a9fe:a9fe::1` are loopback and the cloud metadata address, and are refused as such.

"Globally routable" is decided by the tables below, taken from IANA's IPv4 and IPv6
Special-Purpose Address Registries (and, for IPv6, its address-space registry: only 2000::/3
is global unicast; site-local fec0::/10 and multicast are outside it), not from Python's
`ipaddress.is_global`, whose answers differ between Python versions. An entry of the registries
marked "Globally Reachable: True" (PCP and TURN anycast, AS112, AMT, ORCHIDv2, DRIP) stays
allowed; every other entry, and every range the registries mark N/A (the deprecated 6to4 relay
anycast 192.88.99.0/24 among them), is refused.

The NAT64 local-use prefix 64:ff9b:1::/48 is refused whatever it embeds: where its IPv4 sits
depends on the local translator's prefix length (/48 to /96), so an attacker could pick an
address whose last 32 bits look global while the translator reads 127.0.0.1 from bits 48-87.
Only `allow_networks` listing the IPv6 address itself lets it in.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Special:
    """One entry of an IANA special-purpose registry: its range, name, and whether it is global."""

    network: str
    name: str
    is_global: bool = False


#: IANA IPv4 Special-Purpose Address Registry (2025), plus multicast (224.0.0.0/4, its own
#: registry), most specific entries first where they nest.
IPV4_SPECIAL: tuple[Special, ...] = (
    Special("0.0.0.0/8", '"This network"'),
    Special("10.0.0.0/8", "Private-Use"),
    Special("100.64.0.0/10", "Shared Address Space (CGNAT)"),
    Special("127.0.0.0/8", "Loopback"),
    Special("169.254.0.0/16", "Link Local (cloud metadata)"),
    Special("172.16.0.0/12", "Private-Use"),
    Special("192.0.0.9/32", "Port Control Protocol Anycast", True),
    Special("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", True),
    Special("192.0.0.0/24", "IETF Protocol Assignments (DS-Lite, NAT64 discovery...)"),
    Special("192.0.2.0/24", "Documentation (TEST-NET-1)"),
    Special("192.31.196.0/24", "AS112-v4", True),
    Special("192.52.193.0/24", "AMT", True),
    Special("192.88.99.0/24", "Deprecated 6to4 Relay Anycast"),
    Special("192.168.0.0/16", "Private-Use"),
    Special("192.175.48.0/24", "Direct Delegation AS112 Service", True),
    Special("198.18.0.0/15", "Benchmarking"),
    Special("198.51.100.0/24", "Documentation (TEST-NET-2)"),
    Special("203.0.113.0/24", "Documentation (TEST-NET-3)"),
    Special("224.0.0.0/4", "Multicast"),
    Special("255.255.255.255/32", "Limited Broadcast"),
    Special("240.0.0.0/4", "Reserved"),
)

#: IANA IPv6 Special-Purpose Address Registry (2025), plus the address-space registry's
#: non-unicast ranges. Anything outside 2000::/3 that is not listed is refused as well.
IPV6_SPECIAL: tuple[Special, ...] = (
    Special("::1/128", "Loopback Address"),
    Special("::/128", "Unspecified Address"),
    Special("::ffff:0:0/96", "IPv4-mapped Address"),
    Special("::ffff:0:0:0/96", "IPv4-translated Address (SIIT)"),
    Special("::/96", "IPv4-compatible Address (deprecated)"),
    Special("64:ff9b::/96", "IPv4-IPv6 Translation (NAT64 well-known)", True),
    Special("64:ff9b:1::/48", "IPv4-IPv6 Translation (local-use)"),
    Special("100::/64", "Discard-Only Address Block"),
    Special("100:0:0:1::/64", "Dummy IPv6 Prefix"),
    Special("2001:1::1/128", "Port Control Protocol Anycast", True),
    Special("2001:1::2/128", "Traversal Using Relays around NAT Anycast", True),
    Special("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", True),
    Special("2001:3::/32", "AMT", True),
    Special("2001:4:112::/48", "AS112-v6", True),
    Special("2001:20::/28", "ORCHIDv2", True),
    Special("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", True),
    Special("2001::/32", "TEREDO"),
    Special("2001:2::/48", "Benchmarking"),
    Special("2001:10::/28", "Deprecated (previously ORCHID)"),
    Special("2001::/23", "IETF Protocol Assignments"),
    Special("2001:db8::/32", "Documentation"),
    Special("2002::/16", "6to4"),
    Special("2620:4f:8000::/48", "Direct Delegation AS112 Service", True),
    Special("3fff::/20", "Documentation"),
    Special("5f00::/16", "Segment Routing (SRv6) SIDs"),
    Special("fc00::/7", "Unique-Local"),
    Special("fe80::/10", "Link-Local Unicast"),
    Special("fec0::/10", "Site-Local (deprecated)"),
    Special("ff00::/8", "Multicast"),
)

_V4 = tuple((ipaddress.IPv4Network(s.network), s) for s in IPV4_SPECIAL)
_V6 = tuple((ipaddress.IPv6Network(s.network), s) for s in IPV6_SPECIAL)
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_SIIT = ipaddress.IPv6Network("::ffff:0:0:0/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_6TO4 = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")


def special(ip: Address) -> Special | None:
    """The registry entry holding `ip` (the most specific one listed first), or None."""
    for net, entry in _V4 if ip.version == 4 else _V6:
        if ip in net:
            return entry
    return None


def unwrap(ip: Address) -> Address:
    """The IPv4 address an IPv6 one embeds (see the module doc), or `ip` itself."""
    if isinstance(ip, ipaddress.IPv4Address):
        return ip
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _MAPPED or ip in _SIIT or ip in _NAT64:
        return low32
    if ip in _COMPATIBLE and int(ip) > 1:  # not :: nor ::1, which are IPv6's own
        return low32
    if ip in _6TO4:
        return ipaddress.IPv4Address((int(ip) >> 80) & 0xFFFFFFFF)
    if ip in _TEREDO:
        return ipaddress.IPv4Address(~int(ip) & 0xFFFFFFFF)  # the client, obfuscated (RFC 4380)
    return ip


def is_global(ip: Address) -> bool:
    """Globally routable, by the registries (no unwrapping: see `AddressPolicy.allowed`)."""
    entry = special(ip)
    if entry is not None:
        return entry.is_global
    return ip.version == 4 or ip in _GLOBAL_UNICAST


def parse(host: str) -> Address | None:
    """The address in a socket address's host (an IPv6 zone `%eth0` dropped), or None."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


class AddressPolicy:
    """A store's policy: `allowed(host)` for the literal address a socket is about to connect to."""

    def __init__(self, allow: Iterable[str]) -> None:
        self.allow: list[Network] = [ipaddress.ip_network(n, strict=False) for n in allow]

    def allowed(self, host: str) -> bool:
        ip = parse(host)
        if ip is None:
            return False  # a name: the check is on addresses, after DNS
        inner = unwrap(ip)
        if any(inner in net for net in self.allow):
            return True
        if ip in _NAT64_LOCAL:
            return any(ip in net for net in self.allow)
        return is_global(inner)

    def socket_factory(self, addr_info: tuple[Any, ...]) -> socket.socket:
        """aiohttp's socket factory: refuse before a socket exists for an address outside the policy."""
        family, kind, proto, _, sockaddr = addr_info
        if not self.allowed(str(sockaddr[0])):
            raise Refused(f"address {sockaddr[0]} is not allowed for this store")
        return socket.socket(family=family, type=kind, proto=proto)


class Refused(OSError):
    """A connection the store's policy does not allow (SSRF protection): to an address outside
    the policy, or a redirect out of the store's URL prefix."""
