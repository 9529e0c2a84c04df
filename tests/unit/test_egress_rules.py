"""The egress filter's rules (issue 38, point 4): which hosts an allowlist lets through, how a
request names its host, and the variables that send a step through the proxy. Pure."""

from __future__ import annotations

import pytest

from armbench.edge.egress import _target, allowed, normal_hosts, origin_form, proxy_env
from armbench.edge.usernet import endpoint_hosts


def test_an_entry_allows_its_own_name_and_a_star_entry_only_the_names_below_it() -> None:
    hosts = normal_hosts(["API.Anthropic.com.", "*.example.com", "[::1]", "10.0.0.7"])
    assert hosts == ("*.example.com", "10.0.0.7", "::1", "api.anthropic.com")
    assert allowed("api.anthropic.com", hosts) and allowed("API.ANTHROPIC.COM.", hosts)
    assert allowed("a.example.com", hosts) and allowed("a.b.example.com", hosts)
    assert not allowed("example.com", hosts)
    assert not allowed("evilexample.com", hosts) and not allowed("api.anthropic.com.evil.io", hosts)
    assert not allowed("github.com", hosts) and allowed("10.0.0.7", hosts) and allowed("[::1]", hosts)
    assert not allowed("anything", ())


@pytest.mark.parametrize(("head", "expected"), [
    (b"CONNECT api.openai.com:443 HTTP/1.1\r\n\r\n", ("CONNECT", "api.openai.com", 443)),
    (b"CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n", ("CONNECT", "2001:db8::1", 8443)),
    (b"GET http://pypi.org/simple/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n", ("GET", "pypi.org", 80)),
    (b"GET http://10.0.0.7:8080/x HTTP/1.1\r\n\r\n", ("GET", "10.0.0.7", 8080)),
])
def test_a_request_names_its_host_by_its_target_never_by_its_host_header(
        head: bytes, expected: tuple[str, str, int]) -> None:
    method, _, host, port = _target(head)
    assert (method, host, port) == expected


@pytest.mark.parametrize("head", [
    b"GET /simple/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n",  # origin form: no host it could check
    b"CONNECT github.com HTTP/1.1\r\n\r\n",  # no port
    b"CONNECT github.com:https HTTP/1.1\r\n\r\n",
    b"GET https://github.com/ HTTP/1.1\r\n\r\n",
    b"garbage\r\n\r\n",
])
def test_a_request_the_filter_cannot_place_is_refused(head: bytes) -> None:
    with pytest.raises(ValueError):
        _target(head)


def test_the_step_is_sent_through_the_proxy_in_both_cases_and_loopback_goes_direct() -> None:
    env = proxy_env(4123)
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY"):
        assert env[name] == "http://127.0.0.1:4123"
    assert env["NO_PROXY"] == env["no_proxy"] == "localhost,127.0.0.1,::1"


def test_an_endpoint_variable_beyond_loopback_names_a_host_the_tool_may_reach() -> None:
    env = {"ANTHROPIC_BASE_URL": "https://LLM.corp.example/v1", "OPENAI_BASE_URL": "http://127.0.0.1:9",
           "OLLAMA_HOST": "gpu-box:11434", "DATABASE_URL": "postgresql://db.internal/x"}
    assert endpoint_hosts(env) == ("gpu-box", "llm.corp.example")


@pytest.mark.parametrize(("line", "sent"), [
    (b"GET http://example.com/a/b?x=1 HTTP/1.1", b"GET /a/b?x=1 HTTP/1.1"),
    (b"GET http://198.51.100.7:8080 HTTP/1.0", b"GET / HTTP/1.0"),
    (b"POST http://example.com:80/ HTTP/1.1", b"POST / HTTP/1.1"),
])
def test_a_plain_http_request_reaches_its_origin_in_origin_form(line: bytes, sent: bytes) -> None:
    """A proxy sends an origin server the path, not the absolute target (Python's http.server,
    and many others, answer 404 to `GET http://host/`); the headers go as they came."""
    head = line + b"\r\nHost: example.com\r\n\r\n"
    assert origin_form(head) == sent + b"\r\nHost: example.com\r\n\r\n"
