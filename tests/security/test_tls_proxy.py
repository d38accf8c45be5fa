"""HTTPS as shipped: Debian's nginx with deploy/nginx/ (a test CA's certificate in place of the
operator's) in front of ``serve`` on its Unix socket with SERVICE_HTTPS=true, checked with real
TLS clients: Python's ssl, ``openssl s_client`` and curl."""

from __future__ import annotations

import http.client
import shutil
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.processes.live import API_KEY, ROOT, server_env, write_definition
from tests.processes.proxy import Proxy, start_proxy

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    """``serve --socket`` (SERVICE_SOCKET) behind the shipped proxy, as deploy/ runs them."""
    folder = tmp_path_factory.mktemp("tls")
    socket = folder / "run" / "web.sock"
    socket.parent.mkdir()
    config = write_definition(folder, {"version": "1.0", "secrets": []})
    env = server_env(data_dir=folder / "data", config=config,
                     extra={"SERVICE_HTTPS": "true", "SERVICE_SOCKET": str(socket)})
    with open(folder / "serve.log", "ab") as log:
        serve = subprocess.Popen([sys.executable, "manage.py", "serve", "--workers", "1"], cwd=ROOT, env=env,
                                 stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True)
    proxy = None
    try:
        proxy = start_proxy(folder / "nginx", upstream_socket=socket, tls=True)
        end = time.monotonic() + 90
        while get(proxy, "/health")[0] != 200:
            assert serve.poll() is None and time.monotonic() < end, (folder / "serve.log").read_text()
            time.sleep(0.1)
        yield proxy
    finally:
        if proxy is not None:
            proxy.stop()
        serve.kill()
        serve.wait(timeout=30)


def tls_context(proxy: Proxy, **versions: ssl.TLSVersion) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(proxy.ca))
    for name, version in versions.items():
        setattr(context, name, version)
    return context


def get(proxy: Proxy, path: str, headers: dict[str, str] | None = None,
        context: ssl.SSLContext | None = None) -> tuple[int, http.client.HTTPResponse, bytes]:
    connection = http.client.HTTPSConnection("localhost", proxy.port, timeout=30,
                                             context=context or tls_context(proxy))
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response, response.read()
    except (OSError, http.client.HTTPException):
        return 0, None, b""  # type: ignore[return-value]
    finally:
        connection.close()


def plain_get(proxy: Proxy, path: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", proxy.http_port, timeout=30)
    connection.request("GET", path)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def test_tls_1_3_is_served_with_a_certificate_the_ca_verifies(served: Proxy) -> None:
    context = tls_context(served)
    connection = http.client.HTTPSConnection("localhost", served.port, timeout=30, context=context)
    connection.request("GET", "/health")
    assert connection.getresponse().status == 200
    assert connection.sock.version() == "TLSv1.3"
    connection.close()


def test_tls_1_2_is_refused(served: Proxy) -> None:
    context = tls_context(served, maximum_version=ssl.TLSVersion.TLSv1_2)
    context.set_ciphers("ALL:@SECLEVEL=0")  # the client may offer anything: the server must refuse
    with pytest.raises(ssl.SSLError):
        http.client.HTTPSConnection("localhost", served.port, timeout=30, context=context).request("GET", "/health")


def _s_client(proxy: Proxy, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{proxy.port}", "-servername", "localhost",
                           "-CAfile", str(proxy.ca), *options], input="", capture_output=True, text=True, timeout=60)


def test_openssl_s_client_sees_tls_1_3_a_verified_chain_and_no_stapled_ocsp(served: Proxy) -> None:
    result = _s_client(served, "-status", "-verify_return_error")
    assert result.returncode == 0, result.stderr
    assert "New, TLSv1.3, Cipher is TLS_" in result.stdout
    assert "Verify return code: 0 (ok)" in result.stdout
    assert "OCSP response: no response sent" in result.stdout
    refused = _s_client(served, "-tls1_2")
    assert refused.returncode != 0 and "alert protocol version" in refused.stdout + refused.stderr


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_gets_health_over_http_2(served: Proxy) -> None:
    result = subprocess.run(
        ["curl", "-sS", "--http2", "--cacert", str(served.ca), "--resolve", f"localhost:{served.port}:127.0.0.1",
         "-o", "/dev/null", "-w", "%{http_version} %{http_code}", f"https://localhost:{served.port}/health"],
        capture_output=True, text=True, timeout=60)
    assert result.stdout == "2 200", result.stderr


def test_plain_http_is_redirected_to_the_same_path_over_https(served: Proxy) -> None:
    response = plain_get(served, "/audit/logs?limit=5")
    assert response.status == 301
    assert response.headers["Location"] == "https://127.0.0.1/audit/logs?limit=5"


def test_acme_challenges_are_answered_over_plain_http_from_the_webroot(served: Proxy) -> None:
    challenge = served.log_path.parent / "acme" / ".well-known" / "acme-challenge"
    challenge.mkdir(parents=True, exist_ok=True)
    (challenge / "tok-3e1a").write_text("tok-3e1a.account-thumbprint")
    connection = http.client.HTTPConnection("127.0.0.1", served.http_port, timeout=30)
    connection.request("GET", "/.well-known/acme-challenge/tok-3e1a")
    response = connection.getresponse()
    assert (response.status, response.read()) == (200, b"tok-3e1a.account-thumbprint")
    assert response.headers["Content-Type"].startswith("text/plain")
    connection.close()


def test_the_admin_over_https_sends_hsts_secure_cookies_and_the_security_headers(served: Proxy) -> None:
    status, response, _ = get(served, "/admin/login/")
    assert status == 200
    assert response.headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    cookies = response.headers.get_all("Set-Cookie") or []
    assert cookies and all("; Secure" in cookie for cookie in cookies), cookies
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert "Server" not in response.headers or response.headers["Server"] == "nginx"


def test_the_api_answers_with_a_key_over_https(served: Proxy) -> None:
    status, _, body = get(served, "/audit/logs?limit=1", headers={"X-API-Key": API_KEY})
    assert status == 200, body
    status, response, _ = get(served, "/audit/logs?limit=1", headers={"X-API-Key": "wrong"})
    assert status == 401 and response.headers["WWW-Authenticate"]


def test_a_forwarded_scheme_a_client_sends_is_replaced_by_the_proxys(served: Proxy) -> None:
    # Over HTTPS a client claiming http gets no redirect: the proxy's X-Forwarded-Proto wins.
    status, _, _ = get(served, "/admin/login/", headers={"X-Forwarded-Proto": "http"})
    assert status == 200
