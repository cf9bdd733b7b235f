"""The page itself over plain HTTP: its three files with a strict Content-Security-
Policy, 404 for anything else, and a script that never parses server text as HTML."""

from __future__ import annotations

import asyncio

import pytest
from web_page import WAIT

from engine.web.server import WebServer


async def get(port: int, path: str, host: str = "127.0.0.1") -> tuple[str, dict[str, str], bytes]:
    """(status line, headers, body) of a GET."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    async with asyncio.timeout(WAIT):
        response = await reader.read()
    writer.close()
    head, _, body = response.partition(b"\r\n\r\n")
    status, *lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    return status, {k.lower(): v for k, v in headers.items()}, body


@pytest.mark.parametrize(
    ("path", "kind", "holds"),
    [
        ("/", "text/html", b'role="log"'),
        ("/app.js", "text/javascript", b"textContent"),
        ("/style.css", "text/css", b".s-cyan"),
    ],
)
async def test_the_pages_files_are_served_with_a_strict_policy(
    web: WebServer, path: str, kind: str, holds: bytes
) -> None:
    status, headers, body = await get(web.port, path, host=f"127.0.0.1:{web.port}")
    assert status == "HTTP/1.1 200 OK"
    assert headers["content-type"].startswith(kind)
    assert holds in body
    policy = headers["content-security-policy"]
    assert "default-src 'none'" in policy
    assert "script-src 'self'" in policy
    assert f"connect-src 'self' ws://127.0.0.1:{web.port} wss://127.0.0.1:{web.port}" in policy
    assert "frame-ancestors 'none'" in policy
    assert headers["x-content-type-options"] == "nosniff"


async def test_an_odd_host_is_left_out_of_the_policy(web: WebServer) -> None:
    _status, headers, _body = await get(web.port, "/", host="evil.example; script-src *")
    assert "connect-src 'self'; " in headers["content-security-policy"]
    assert "evil" not in headers["content-security-policy"]


async def test_anything_else_is_not_found(web: WebServer) -> None:
    status, headers, body = await get(web.port, "/../../etc/passwd")
    assert status == "HTTP/1.1 404 Not Found"
    assert b"this server has one page, at /" in body
    assert "content-security-policy" in headers


async def test_the_websocket_path_without_an_upgrade_is_refused(web: WebServer) -> None:
    status, _headers, _body = await get(web.port, "/ws")
    assert status.startswith("HTTP/1.1 426")


def test_the_script_never_parses_server_text_as_html() -> None:
    from importlib import resources

    script = (resources.files("engine.web") / "static" / "app.js").read_text("utf-8")
    for risky in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert risky not in script
