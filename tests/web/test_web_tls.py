"""TLS for telnet and the web: a self-signed certificate made at test time (with the
``openssl`` command), the page and its websocket over https/wss, telnet over TLS, and
a certificate or key that cannot be used is one clear line."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from pathlib import Path

import pytest
from web_page import WAIT, Page, add_accounts

from engine.errors import UsageError
from engine.sim.simulation import Simulation
from engine.telnet.serve import tls_context
from engine.telnet.server import MudServer
from engine.telnet.settings import ServeOptions, TelnetConfig
from engine.web.server import WebServer

needs_openssl = pytest.mark.skipif(
    shutil.which("openssl") is None,
    reason="the openssl command is not installed (it makes the test's self-signed certificate)",
)


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def trusting(cert: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cert))


@needs_openssl
async def test_the_page_and_its_websocket_over_tls(
    sim: Simulation, certificate: tuple[Path, Path]
) -> None:
    cert, key = certificate
    add_accounts(sim, "Pip")
    tls = tls_context(cert, key)
    mud = MudServer(sim, ServeOptions(port=0, tls=tls), config=TelnetConfig())
    web = WebServer(mud, 0, tls=tls)
    await web.start()
    try:
        assert web.url == f"https://127.0.0.1:{web.port}/"
        reader, writer = await asyncio.open_connection("127.0.0.1", web.port,
                                                       ssl=trusting(cert))  # fmt: skip
        writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        async with asyncio.timeout(WAIT):
            response = await reader.read()
        assert response.startswith(b"HTTP/1.1 200 OK")
        writer.close()
        page = await Page.open(web.port, tls=trusting(cert))
        await page.login("Pip")
        await page.close()
        with pytest.raises(ssl.SSLCertVerificationError):  # a client that does not trust it
            await Page.open(web.port, tls=ssl.create_default_context())
    finally:
        await web.close()
        await mud.close()


@needs_openssl
async def test_telnet_over_tls(sim: Simulation, certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    mud = MudServer(sim, ServeOptions(port=0, tls=tls_context(cert, key)), config=TelnetConfig())
    await mud.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", mud.port, ssl=trusting(cert))
        seen = b""
        async with asyncio.timeout(WAIT):
            while b"Name: " not in seen:
                chunk = await reader.read(4096)
                assert chunk, f"closed; saw {seen!r}"
                seen += chunk
        assert b"Welcome to Fixture" in seen
        writer.close()
    finally:
        await mud.close()


def test_a_missing_certificate_or_key_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^cannot read the TLS certificate or key: no file "):
        tls_context(tmp_path / "missing.pem", tmp_path / "missing-key.pem")


def test_a_file_that_is_not_a_certificate_is_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"are not a certificate and its private key in PEM"):
        tls_context(junk, junk)


@needs_openssl
def test_a_key_that_is_not_the_certificates_is_one_line(
    tmp_path: Path, certificate: tuple[Path, Path]
) -> None:
    cert, _key = certificate
    other = tmp_path / "other-key.pem"
    subprocess.run(["openssl", "genrsa", "-out", str(other), "2048"], check=True,
                   capture_output=True)  # fmt: skip
    with pytest.raises(UsageError, match=r"are not a certificate and its private key"):
        tls_context(cert, other)
