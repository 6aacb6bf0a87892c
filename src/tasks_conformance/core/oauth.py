"""OAuth refresh for an HTTP target: an access token from the refresh_token grant before the
run, and a new one when the server answers 401 during it.

The token endpoint is found as the MCP authorization specification says: the protected resource
metadata (RFC 9728) named by `resource_metadata` in the server's WWW-Authenticate challenge, else
at `/.well-known/oauth-protected-resource` (path-suffixed, then at the root) on the server's
origin; then its first authorization server's metadata (RFC 8414, then OpenID Connect discovery)
gives `token_endpoint`. A --credentials-file may name the endpoint and skip all that.

The grant is one form POST (RFC 6749 section 6) made with the run's own httpx, with the client
authenticated by HTTP Basic or in the form (section 2.3.1), or not at all for a public client.
It used to be authlib's httpx client; authlib 1.9.10 deprecated that client in favour of one
that binds to httpx2 whenever httpx2 happens to be installed (so its exceptions changed with
unrelated packages) and printed a deprecation warning on every run that used it. The grant is
small enough to own; this module is imported only when OAuth flags were given.

Secrets: the refresh token, the client secret and every access token issued are added to the
run's redactor before anything can print them; messages never quote a token response.
"""

from __future__ import annotations

import base64
import json
import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import anyio
import httpx

from tasks_conformance.core.causes import CauseKind
from tasks_conformance.core.errors import ConnectFailed
from tasks_conformance.core.oauth_settings import OAuthCredentials
from tasks_conformance.core.wirelog import WireLog

# A server that refuses every fresh token must not make the run refresh forever; a run lasts
# seconds to minutes, so a few refreshes cover any real token lifetime.
MAX_REFRESHES = 5
# Metadata documents are small; a larger body is not read on.
MAX_METADATA_BYTES = 256 * 1024
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_RESOURCE_METADATA = re.compile(r'resource_metadata\s*=\s*(?:"([^"]*)"|([^\s,]+))', re.IGNORECASE)


class OAuthFailed(ConnectFailed):
    """The access token could not be had; the message is safe to print (secrets redacted)."""

    kind = CauseKind.OAUTH


@dataclass(frozen=True)
class Endpoint:
    """Where and how to ask for a token."""

    url: str
    resource: str  # the RFC 8707 resource indicator: the MCP server the token is for
    auth_methods: tuple[str, ...] = ()  # token_endpoint_auth_methods_supported, if listed


def resource_metadata_url(challenge: str | None) -> str | None:
    """The `resource_metadata` parameter of a WWW-Authenticate challenge, if any."""
    m = _RESOURCE_METADATA.search(challenge or "")
    return (m.group(1) or m.group(2)) if m else None


def canonical_resource(url: str) -> str:
    """The MCP server's canonical URI (RFC 8707): scheme and host lower-case, no query or fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/") or "", "", ""))


def protected_resource_candidates(server_url: str, challenge: str | None) -> list[str]:
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    out = []
    named = resource_metadata_url(challenge)
    if named:
        out.append(named)
    path = parts.path.rstrip("/")
    if path:
        out.append(f"{origin}/.well-known/oauth-protected-resource{path}")
    out.append(f"{origin}/.well-known/oauth-protected-resource")
    return list(dict.fromkeys(out))


def authorization_server_candidates(issuer: str) -> list[str]:
    """RFC 8414 first, then OpenID Connect discovery, path-inserted and path-appended forms."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]
    return [f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration"]


def resource_allowed(resource: str, server_url: str) -> bool:
    """Protected resource metadata is for this server: the same origin, and the server's path
    within the resource's (RFC 9728 section 3.3; a prefix, as MCP SDKs allow)."""
    named, ours = urlsplit(resource), urlsplit(server_url)
    if (named.scheme.lower(), named.netloc.lower()) != (ours.scheme.lower(), ours.netloc.lower()):
        return False
    base = named.path.rstrip("/")
    return ours.path.rstrip("/") == base or ours.path.startswith(base + "/")


def issuer_matches(named: Any, issuer: str) -> bool:
    """Authorization server metadata names the issuer it was asked for (RFC 8414 section 3.3),
    so that one server's metadata cannot send credentials to another's endpoint."""
    return isinstance(named, str) and named.rstrip("/") == issuer.rstrip("/")


def _safe_to_send_secrets(url: str) -> bool:
    """Credentials go over HTTPS, or plain HTTP to this machine only."""
    parts = urlsplit(url)
    return parts.scheme == "https" or (parts.scheme == "http" and (parts.hostname or "") in _LOOPBACK)


def grant_request(refresh_token: str, resource: str, client_id: str | None, client_secret: str | None,
                  auth_method: str) -> tuple[dict[str, str], dict[str, str]]:
    """The form and headers of a refresh_token grant (RFC 6749 section 6) carrying the RFC 8707
    resource indicator. `auth_method`: client_secret_basic (HTTP Basic, id and secret
    form-urlencoded first, section 2.3.1), client_secret_post (both in the form) or none (a
    public client names itself in the form)."""
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "resource": resource}
    headers = {"Accept": "application/json"}
    if auth_method == "client_secret_basic" and client_secret:
        pair = f"{quote(client_id or '', safe='')}:{quote(client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    else:
        if client_id:
            form["client_id"] = client_id
        if auth_method == "client_secret_post" and client_secret:
            form["client_secret"] = client_secret
    return form, headers


async def _read_bounded(resp: httpx.Response) -> bytes | None:
    """The body, or None past MAX_METADATA_BYTES (a token response is small)."""
    body = bytearray()
    async for chunk in resp.aiter_bytes():
        body.extend(chunk)
        if len(body) > MAX_METADATA_BYTES:
            return None
    return bytes(body)


def _json_object(body: bytes | None) -> dict[str, Any] | None:
    try:
        doc = json.loads(body) if body is not None else None
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


class TokenSource:
    """The run's access token: fetched once before the first request, refreshed on a 401.

    Shared by every HTTP connection of one run (a reconnect reuses the token). Concurrent 401s
    refresh once: a request that failed with a token already replaced just retries."""

    def __init__(self, creds: OAuthCredentials, server_url: str, wire: WireLog, timeout_s: float) -> None:
        self.creds = creds
        self.server_url = server_url
        self.wire = wire
        self.timeout_s = timeout_s
        self.authorization: str | None = None  # the Authorization header value in use
        self.refreshes = 0  # grants made (the first included)
        self.problem: str | None = None  # why the last refresh failed
        self.refused = False  # a refresh failed: the run goes on without asking again
        self._refresh_token = creds.refresh_token
        self._endpoint: Endpoint | None = None
        self._lock = anyio.Lock()
        wire.redactor.add(*creds.secrets())

    # -- what the HTTP transport calls ----------------------------------------------------------

    async def initial(self, client: httpx.AsyncClient, headers: Mapping[str, str]) -> str:
        """The Authorization header value for the run's first request; raises OAuthFailed.
        `headers`: the run's other headers (--header), sent with the credential-less GET too."""
        async with self._lock:
            if self.authorization is None:
                challenge = None if self.creds.token_endpoint else await self._challenge(client, headers)
                await self._refresh(challenge)
            assert self.authorization is not None
            return self.authorization

    async def after_401(self, used: str | None, challenge: str | None) -> str | None:
        """A new Authorization value to retry with, or None (the 401 stands; `problem` says why)."""
        async with self._lock:
            if self.authorization is not None and used != self.authorization:
                return self.authorization  # another request refreshed meanwhile
            if self.refused:
                return None  # asking again would only be refused again; `problem` still says why
            if self.refreshes > MAX_REFRESHES:
                self.problem = (f"the access token was refreshed {MAX_REFRESHES} times in this run and the server "
                                "still answers 401; tasks-conformance stopped refreshing")
                return None
            try:
                await self._refresh(challenge)
            except OAuthFailed as exc:
                self.problem = str(exc)
                self.refused = True
                return None
            return self.authorization

    def describe_401(self) -> str:
        if self.problem:
            return f"the server refused the OAuth access token and refreshing it failed: {self.problem}"
        return "the server refused the access token the OAuth refresh gave (check the client's scopes and audience)"

    # -- the grant ------------------------------------------------------------------------------

    async def _refresh(self, challenge: str | None) -> None:
        endpoint = self._endpoint
        if endpoint is None:
            endpoint = self._endpoint = await self._find_endpoint(challenge)
        token = await self._grant(endpoint)
        self.refreshes += 1
        self.problem = None
        self.authorization = f"Bearer {token}"
        self._note(f"OAuth: access token {'refreshed' if self.refreshes > 1 else 'obtained'} "
                   f"from {endpoint.url} (refresh_token grant {self.refreshes})")

    async def _grant(self, endpoint: Endpoint) -> str:
        if not _safe_to_send_secrets(endpoint.url):
            raise self._failed(f"the token endpoint {endpoint.url} is not HTTPS; credentials are sent over "
                               "HTTPS only (or plain HTTP to this machine)")
        form, headers = grant_request(self._refresh_token, endpoint.resource, self.creds.client_id,
                                      self.creds.client_secret, self._auth_method(endpoint))
        try:
            with anyio.fail_after(self.timeout_s):
                async with (httpx.AsyncClient(timeout=self.timeout_s, trust_env=False,
                                              follow_redirects=False) as client,
                            client.stream("POST", endpoint.url, data=form, headers=headers) as resp):
                    body = await _read_bounded(resp)
                    status = resp.status_code
        except TimeoutError:
            raise self._failed(f"the token endpoint {endpoint.url} did not answer within "
                               f"{self.timeout_s:.0f}s") from None
        except (httpx.HTTPError, OSError, ValueError) as exc:
            raise self._failed(f"the token request to {endpoint.url} failed: {type(exc).__name__}: {exc}") from None
        token = _json_object(body)
        if status != 200:
            error = token.get("error") if token else None
            if not isinstance(error, str) or not error:
                raise self._failed(f"the token endpoint {endpoint.url} answered HTTP {status} without an OAuth error")
            # The authorization server's words, which may echo what it was sent: redacted, bounded.
            description = token.get("error_description") if token else None
            said = f": {description}" if isinstance(description, str) and description else ""
            raise self._failed(f"the token endpoint {endpoint.url} refused the refresh: {error}{said}")
        if token is None:
            raise self._failed(f"the token endpoint {endpoint.url} answered HTTP 200 without a JSON object")
        access = token.get("access_token")
        if not isinstance(access, str) or not access:
            raise self._failed(f"the token endpoint {endpoint.url} answered without an access_token")
        # Known to the redactor before anything could print it (a server may echo it back).
        self.wire.redactor.add(access)
        kind = str(token.get("token_type") or "Bearer")
        if kind.lower() != "bearer":
            raise self._failed(f"the token endpoint issued a {kind[:40]!r} token; only Bearer tokens are supported")
        rotated = token.get("refresh_token")
        if isinstance(rotated, str) and rotated:
            # Refresh token rotation: the old one is spent, the next refresh uses this one.
            self.wire.redactor.add(rotated)
            self._refresh_token = rotated
        return access

    def _auth_method(self, endpoint: Endpoint) -> str:
        if not self.creds.client_secret:
            return "none"
        methods = endpoint.auth_methods
        if methods and "client_secret_basic" not in methods and "client_secret_post" in methods:
            return "client_secret_post"
        return "client_secret_basic"  # RFC 8414's default

    # -- discovery ------------------------------------------------------------------------------

    async def _challenge(self, client: httpx.AsyncClient, headers: Mapping[str, str]) -> str | None:
        """The server's WWW-Authenticate for a request without credentials (a GET: it changes
        nothing on the server), or None."""
        try:
            with anyio.fail_after(self.timeout_s):
                request = client.build_request("GET", self.server_url,
                                               headers={**headers, "Accept": "text/event-stream"})
                resp = await client.send(request, stream=True)
                await resp.aclose()
        except Exception:  # no challenge to read: the well-known locations remain
            return None
        challenge = resp.headers.get("www-authenticate") if resp.status_code == 401 else None
        self._note(f"OAuth: GET without credentials answered HTTP {resp.status_code}"
                   + (f"; resource_metadata {resource_metadata_url(challenge)}" if resource_metadata_url(challenge)
                      else ""))
        return challenge

    async def _find_endpoint(self, challenge: str | None) -> Endpoint:
        resource = canonical_resource(self.server_url)
        if self.creds.token_endpoint:
            return Endpoint(self.creds.token_endpoint, resource)
        async with httpx.AsyncClient(timeout=self.timeout_s, trust_env=False, follow_redirects=True) as client:
            tried: list[str] = []
            issuer = None
            for url in protected_resource_candidates(self.server_url, challenge):
                doc = await self._metadata(client, url, tried)
                servers = doc.get("authorization_servers") if doc else None
                named = doc.get("resource") if doc else None
                if isinstance(named, str) and not resource_allowed(named, self.server_url):
                    tried[-1] += f" (its resource {named[:200]} is another server)"
                    continue
                if isinstance(servers, list) and servers and isinstance(servers[0], str):
                    issuer = servers[0]
                    resource = named if isinstance(named, str) and named else resource
                    break
            if issuer is None:
                # No protected resource metadata: the server's origin is taken for the issuer
                # (how the 2025-03-26 authorization spec found it).
                parts = urlsplit(self.server_url)
                issuer = f"{parts.scheme}://{parts.netloc}"
            for url in authorization_server_candidates(issuer):
                doc = await self._metadata(client, url, tried)
                if doc is not None and not issuer_matches(doc.get("issuer"), issuer):
                    tried[-1] += f" (it names another issuer than {issuer})"
                    continue
                endpoint = doc.get("token_endpoint") if doc else None
                if isinstance(endpoint, str) and endpoint.startswith(("http://", "https://")):
                    methods = doc.get("token_endpoint_auth_methods_supported") if doc else None
                    listed = tuple(m for m in methods if isinstance(m, str)) if isinstance(methods, list) else ()
                    self._note(f"OAuth: token endpoint {endpoint} (from {url})")
                    return Endpoint(endpoint, resource, listed)
        raise self._failed("no token endpoint found (tried " + ", ".join(tried)
                           + "); name it with token_endpoint in --credentials-file")

    async def _metadata(self, client: httpx.AsyncClient, url: str, tried: list[str]) -> dict[str, Any] | None:
        """A metadata document: a JSON object from a 200, bounded in size; None otherwise."""
        tried.append(url)
        try:
            with anyio.fail_after(self.timeout_s):
                async with client.stream("GET", url, headers={"Accept": "application/json"}) as resp:
                    if resp.status_code != 200:
                        return None
                    body = await _read_bounded(resp)
        except Exception:  # unreachable, timed out, malformed: try the next location
            return None
        return _json_object(body)

    # -- words ----------------------------------------------------------------------------------

    def _failed(self, text: str) -> OAuthFailed:
        return OAuthFailed(self.wire.redactor.text(f"OAuth refresh failed: {text}"[:600]))

    def _note(self, text: str) -> None:
        self.wire.record("in", "event", b"", note=text)


# One TokenSource per run: a run has exactly one WireLog, and the transport factory is called
# again on every reconnect, which must reuse the token rather than refresh anew.
_SOURCES: weakref.WeakKeyDictionary[WireLog, TokenSource] = weakref.WeakKeyDictionary()


def token_source(creds: OAuthCredentials, server_url: str, wire: WireLog, timeout_s: float) -> TokenSource:
    source = _SOURCES.get(wire)
    if source is None:
        source = _SOURCES[wire] = TokenSource(creds, server_url, wire, timeout_s)
    return source
