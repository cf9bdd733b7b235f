"""``mudsim serve``'s TLS certificate checks (``engine.telnet.certificates``), with
certificates made here by ``cryptography``: an expired one is exit 2 and one line (or a
warning with ``--allow-expired-cert``), one not valid yet or for another host a warning,
an encrypted key one line and never a passphrase prompt, even at a terminal."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
import signal
import ssl
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from helpers import REPO, mudsim, mudsim_command, mudsim_env

from engine.errors import UsageError
from engine.telnet.certificates import Certificate, check, findings, names_host, parse
from engine.telnet.serve import tls_context

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
FAKE = "fake:look"
STARTING = 60.0
"""Seconds a served world may take to say where it listens (a loaded machine)."""


def make_certificate(folder: Path, *, before: timedelta = -DAY, after: timedelta = DAY,
                     dns: tuple[str, ...] = ("localhost",), ips: tuple[str, ...] = ("127.0.0.1",),
                     common_name: str = "localhost", passphrase: bytes | None = None,
                     ) -> tuple[Path, Path]:  # fmt: skip
    """A self-signed certificate valid from now + ``before`` to now + ``after`` (real
    time), for ``dns`` and ``ips`` (neither: no subjectAltName at all), and its key
    (encrypted with ``passphrase``): the two PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.now(UTC)
    builder = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now + before).not_valid_after(now + after)
    )  # fmt: skip
    alt: list[x509.GeneralName] = [x509.DNSName(n) for n in dns]
    alt += [x509.IPAddress(ipaddress.ip_address(a)) for a in ips]
    if alt:
        builder = builder.add_extension(x509.SubjectAlternativeName(alt), critical=False)
    cert = builder.sign(key, hashes.SHA256())
    encryption: serialization.KeySerializationEncryption = (
        serialization.NoEncryption() if passphrase is None
        else serialization.BestAvailableEncryption(passphrase)
    )  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8, encryption))  # fmt: skip
    return cert_path, key_path


def facts(dns: tuple[str, ...] = (), ips: tuple[str, ...] = ()) -> Certificate:
    return Certificate(NOW - DAY, NOW + DAY, dns, tuple(ipaddress.ip_address(a) for a in ips))


# -- pure -------------------------------------------------------------------------------
def test_a_good_certificate_for_the_host_has_nothing_to_say(tmp_path: Path) -> None:
    cert, _key = make_certificate(tmp_path)
    found = findings(parse(cert.read_bytes()), cert, "127.0.0.1", datetime.now(UTC))
    assert found.expired is None
    assert found.warnings == ()


def test_an_expired_certificate_is_found_expired(tmp_path: Path) -> None:
    cert, _key = make_certificate(tmp_path, before=-10 * DAY, after=-DAY)
    found = findings(parse(cert.read_bytes()), cert, "127.0.0.1", datetime.now(UTC))
    assert found.expired is not None
    assert found.warnings == ()


def test_a_certificate_not_valid_yet_is_one_warning(tmp_path: Path) -> None:
    cert, _key = make_certificate(tmp_path, before=2 * DAY, after=10 * DAY)
    found = findings(parse(cert.read_bytes()), cert, "127.0.0.1", datetime.now(UTC))
    assert found.expired is None
    (warning,) = found.warnings
    assert re.search(r"is not valid until \d{4}-\d\d-\d\d \d\d:\d\d UTC", warning)


def test_a_certificate_for_another_host_is_one_warning_naming_both(tmp_path: Path) -> None:
    cert, _key = make_certificate(tmp_path, dns=("mud.example.org",), ips=("192.0.2.7",))
    found = findings(parse(cert.read_bytes()), cert, "198.51.100.4", datetime.now(UTC))
    (warning,) = found.warnings
    assert "names mud.example.org, 192.0.2.7, not 198.51.100.4 (--bind)" in warning


@pytest.mark.parametrize(
    ("cert", "host", "named"),
    [
        (facts(ips=("192.0.2.7",)), "192.0.2.7", True),
        (facts(ips=("192.0.2.7",)), "192.0.2.8", False),
        (facts(dns=("192.0.2.7",)), "192.0.2.7", False),  # an address is an IP name
        (facts(ips=("::1",)), "::1", True),
        (facts(dns=("localhost",)), "127.0.0.1", True),  # loopback: localhost does too
        (facts(dns=("localhost",)), "192.0.2.7", False),
        (facts(ips=("127.0.0.1",)), "localhost", True),
        (facts(dns=("mud.example.org",)), "MUD.example.org.", True),
        (facts(dns=("*.example.org",)), "mud.example.org", True),
        (facts(dns=("*.example.org",)), "a.mud.example.org", False),
        (facts(dns=("*.example.org",)), "example.org", False),
        (facts(dns=("mud.example.org",)), "0.0.0.0", True),  # a wildcard bind: no name known
        (facts(dns=("mud.example.org",)), "::", True),
        (facts(), "127.0.0.1", False),
    ],
)
def test_names_host(cert: Certificate, host: str, named: bool) -> None:
    assert names_host(cert, host) is named


def test_without_a_subject_alt_name_the_common_name_counts(tmp_path: Path) -> None:
    cert, _key = make_certificate(tmp_path, dns=(), ips=(), common_name="192.0.2.7")
    read = parse(cert.read_bytes())
    assert read.ip_addresses == (ipaddress.ip_address("192.0.2.7"),)
    assert names_host(read, "192.0.2.7")


# -- check and tls_context ------------------------------------------------------------------
def test_check_refuses_an_expired_certificate_unless_allowed(tmp_path: Path) -> None:
    cert, _key = make_certificate(tmp_path, before=-10 * DAY, after=-DAY)
    with pytest.raises(UsageError, match=r"expired on .* --allow-expired-cert"):
        check(cert, "127.0.0.1")
    (warning,) = check(cert, "127.0.0.1", allow_expired=True)
    assert "expired on" in warning
    assert "served anyway" in warning


def test_check_says_each_problem_in_a_line(tmp_path: Path) -> None:
    cert, _key = make_certificate(tmp_path, before=DAY, after=2 * DAY, dns=("a.example",), ips=())
    warnings = check(cert, "192.0.2.7")
    assert len(warnings) == 2
    assert "not valid until" in warnings[0]
    assert "names a.example, not 192.0.2.7" in warnings[1]
    assert check(cert, "192.0.2.7", now=datetime.now(UTC) + 1.5 * DAY) == warnings[1:]


def test_an_encrypted_key_says_so(tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path, passphrase=b"a long passphrase")
    with pytest.raises(UsageError, match=r"the TLS key .*key\.pem is encrypted"):
        tls_context(cert, key)


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
def test_an_encrypted_key_never_asks_for_its_passphrase_at_a_terminal(tmp_path: Path) -> None:
    """Without a ``password`` callback, OpenSSL asks "Enter PEM pass phrase:" on the
    controlling terminal and waits for ever."""
    cert, key = make_certificate(tmp_path, passphrase=b"a long passphrase")
    code = (
        "import fcntl, sys, termios\n"
        "fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # the pseudo-terminal is ours: /dev/tty\n"
        "from engine.errors import UsageError\n"
        "from engine.telnet.serve import tls_context\n"
        "try:\n"
        f"    tls_context({str(cert)!r}, {str(key)!r})\n"
        "except UsageError as exc:\n"
        "    print('refused:', exc)\n"
    )
    primary, secondary = os.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-c", code], stdin=secondary,
                                   stdout=secondary, stderr=secondary, cwd=REPO,
                                   env=mudsim_env(), start_new_session=True)  # fmt: skip
        os.close(secondary)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            pytest.fail("tls_context waited at the terminal (a passphrase prompt)")
        said = _read_all(primary)
    finally:
        os.close(primary)
    assert "refused: the TLS key" in said
    assert "pass phrase" not in said.lower()


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the other end is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")


# -- mudsim serve -----------------------------------------------------------------------
def test_serve_with_an_expired_certificate_is_exit_2_and_one_line(
    tmp_path: Path, world_file: Path
) -> None:
    cert, key = make_certificate(tmp_path / "tls", before=-10 * DAY, after=-DAY)
    done = mudsim("serve", world_file, "--vault", tmp_path / "v", "--telnet", "0",
                  "--llm", FAKE, "--tls-cert", cert, "--tls-key", key)  # fmt: skip
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "expired" in line
    assert line.startswith("mudsim: the TLS certificate ")
    assert not (tmp_path / "v").exists()  # refused before anything started


def test_serve_with_an_encrypted_key_is_exit_2_and_one_line(
    tmp_path: Path, world_file: Path
) -> None:
    cert, key = make_certificate(tmp_path / "tls", passphrase=b"a long passphrase")
    done = mudsim("serve", world_file, "--vault", tmp_path / "v", "--telnet", "0",
                  "--llm", FAKE, "--tls-cert", cert, "--tls-key", key)  # fmt: skip
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "is encrypted" in line


def test_allow_expired_cert_goes_with_a_certificate(tmp_path: Path, world_file: Path) -> None:
    done = mudsim("serve", world_file, "--vault", tmp_path / "v", "--allow-expired-cert")
    assert done.returncode == 2
    assert done.stderr == "mudsim: --allow-expired-cert goes with --tls-cert and --tls-key\n"


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_serve_with_allow_expired_cert_serves_and_warns_once(
    tmp_path: Path, world_file: Path
) -> None:
    cert, key = make_certificate(tmp_path / "tls", before=-10 * DAY, after=-DAY,
                                 dns=("mud.example.org",), ips=())  # fmt: skip
    process = await asyncio.create_subprocess_exec(
        *mudsim_command("serve", world_file, "--vault", tmp_path / "v", "--telnet", "0",
                        "--llm", FAKE, "--tls-cert", cert, "--tls-key", key,
                        "--allow-expired-cert"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=REPO,
        env=mudsim_env(),
    )  # fmt: skip
    assert process.stderr is not None
    err = ""
    try:
        async with asyncio.timeout(STARTING):
            while "connect with: telnet" not in err:
                line = (await process.stderr.readline()).decode()
                if not line:
                    raise AssertionError(f"mudsim ended: {err}")
                err += line
        port = int(re.findall(r"connect with: telnet \S+ (\d+)", err)[0])
        seen = await _greeting_over_tls(port)  # served, so stopping is graceful now
        process.send_signal(signal.SIGTERM)
        _out, rest = await asyncio.wait_for(process.communicate(), 60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.communicate()
    err += rest.decode()
    assert process.returncode == 0, err
    assert b"Name: " in seen
    assert "over TLS" in err
    warnings = [line for line in err.splitlines() if line.startswith("mudsim: warning:")]
    assert len([w for w in warnings if "expired on" in w]) == 1
    assert len([w for w in warnings if "names mud.example.org, not 127.0.0.1" in w]) == 1
    assert "Traceback" not in err


async def _greeting_over_tls(port: int) -> bytes:
    """What a TLS client that checks nothing (the certificate has expired) is sent up to
    the login's first prompt."""
    blind = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    blind.check_hostname = False
    blind.verify_mode = ssl.CERT_NONE
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=blind)
    seen = b""
    try:
        async with asyncio.timeout(STARTING):
            while b"Name: " not in seen:
                chunk = await reader.read(4096)
                assert chunk, f"closed; saw {seen!r}"
                seen += chunk
    finally:
        writer.close()
    return seen
