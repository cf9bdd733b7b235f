"""What ``mudsim serve`` checks of its TLS certificate and key before it listens.

    the key is encrypted           UsageError (exit 2); never a passphrase prompt
    the certificate has expired    UsageError (exit 2) unless --allow-expired-cert: a warning
    it is not valid yet            a warning; served
    its names miss the host        a warning; served

"The host served" is the ``--bind`` address, the one ``serve`` tells clients to connect
to: an IP address must be among the certificate's IP names (on a loopback address,
``localhost`` does as well: what people on this machine type); a host name must match
one of its DNS names (``*.example.org`` matches one label); a wildcard (``0.0.0.0``,
``::``) says nothing of the name clients use, so no name is checked. The names are the
subjectAltName's, or the subject's common name when the certificate has none (as older
clients read it). Only the first certificate of the file (the server's own) is read.
``check`` is pure but for reading the file; the rest is pure.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import NameOID

from engine.errors import UsageError

WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Certificate:
    """What the checks read of a certificate."""

    not_before: datetime
    not_after: datetime
    dns_names: tuple[str, ...] = ()
    ip_addresses: tuple[IPAddress, ...] = ()

    @property
    def names(self) -> list[str]:
        return [*self.dns_names, *(str(a) for a in self.ip_addresses)]


@dataclass(frozen=True)
class Findings:
    """``expired``: when the certificate expired (None: it has not); ``warnings``: the
    other problems, a line each."""

    expired: datetime | None
    warnings: tuple[str, ...]


def refuse_passphrase(key: Path) -> Callable[[], bytes]:
    """``load_cert_chain``'s ``password``: called only for an encrypted key, which it
    refuses in one line (without it, OpenSSL asks for the passphrase on the terminal)."""

    def refuse() -> bytes:
        raise UsageError(
            f"the TLS key {key} is encrypted (it has a passphrase); serve needs it "
            f"unencrypted, readable by you alone: (umask 077; openssl pkey -in {key} "
            "-out plain-key.pem)"
        )

    return refuse


def parse(data: bytes) -> Certificate:
    """The first certificate of a PEM file's ``data``; ``ValueError`` if there is none."""
    cert = x509.load_pem_x509_certificates(data)[0]
    try:
        alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        common = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        texts = [str(a.value) for a in common]
        ips = [ip for text in texts if (ip := _address(text)) is not None]
        dns = [text for text in texts if _address(text) is None]
        return Certificate(cert.not_valid_before_utc, cert.not_valid_after_utc,
                           tuple(dns), tuple(ips))  # fmt: skip
    ips = [ip for ip in alt.get_values_for_type(x509.IPAddress)
           if isinstance(ip, ipaddress.IPv4Address | ipaddress.IPv6Address)]  # fmt: skip
    return Certificate(cert.not_valid_before_utc, cert.not_valid_after_utc,
                       tuple(alt.get_values_for_type(x509.DNSName)), tuple(ips))  # fmt: skip


def findings(cert: Certificate, path: Path, host: str, now: datetime) -> Findings:
    """What is wrong with ``cert`` (read from ``path``) served on ``host`` at ``now``."""
    expired = cert.not_after if now >= cert.not_after else None
    warnings = []
    if expired is None and now < cert.not_before:
        warnings.append(f"the TLS certificate {path} is not valid until "
                        f"{_when(cert.not_before)}: clients refuse it until then")  # fmt: skip
    if not names_host(cert, host):
        named = ", ".join(cert.names) or "no host"
        warnings.append(f"the TLS certificate {path} names {named}, not {host} (--bind): "
                        "clients that check the name refuse it")  # fmt: skip
    return Findings(expired, tuple(warnings))


def names_host(cert: Certificate, host: str) -> bool:
    """Whether a client connecting to ``host`` finds it among ``cert``'s names (a
    wildcard bind: nothing to check)."""
    if host in WILDCARD_BINDS:
        return True
    address = _address(host)
    if address is not None:
        return address in cert.ip_addresses or (
            address.is_loopback and names_host(cert, "localhost")
        )
    wanted = host.rstrip(".").lower()
    return any(_dns_matches(name, wanted) for name in cert.dns_names) or (
        wanted == "localhost" and any(a.is_loopback for a in cert.ip_addresses)
    )


def check(cert_path: Path, host: str, *, allow_expired: bool = False,
          now: datetime | None = None) -> list[str]:  # fmt: skip
    """The warnings for the certificate at ``cert_path`` (a PEM file ``load_cert_chain``
    took already); ``UsageError`` if it has expired and ``allow_expired`` is not set."""
    try:
        cert = parse(cert_path.read_bytes())
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the TLS certificate {cert_path}: {exc}") from exc
    found = findings(cert, cert_path, host, now or datetime.now(UTC))
    if found.expired is None:
        return list(found.warnings)
    expired = f"the TLS certificate {cert_path} expired on {_when(found.expired)}"
    if not allow_expired:
        raise UsageError(f"{expired}: clients refuse it (renew it, or serve it anyway with "
                         "--allow-expired-cert)")  # fmt: skip
    return [f"{expired}: clients refuse it (served anyway: --allow-expired-cert)",
            *found.warnings]  # fmt: skip


def _dns_matches(pattern: str, host: str) -> bool:
    """RFC 6125: ``*`` only as the whole leftmost label, standing for exactly one label."""
    pattern = pattern.rstrip(".").lower()
    if not pattern.startswith("*."):
        return pattern == host
    first, _, rest = host.partition(".")
    return bool(first) and rest == pattern[2:]


def _address(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


__all__ = ["Certificate", "Findings", "check", "findings", "names_host", "parse",
           "refuse_passphrase"]  # fmt: skip
