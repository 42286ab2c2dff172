"""Cross-check of ucpd's RFC 9421 / RFC 9530 code against an independent implementation,
the `http-message-signatures` package from PyPI (run by tests/it/signatures.rs).

Signs requests the way Google's merchant guide describes (label sig-ucp,
tag="ucp-rest-request", covering @method @path @authority content-type content-digest
idempotency-key, not ucp-agent), sends them to ucpd over MCP and REST, and verifies ucpd's
signed complete_checkout response with the JWK ucpd publishes at /.well-known/ucp.

Usage: python signatures_crosscheck.py <base_url> <profile_url> <private_key.pem> <kid>
Prints one "ok: ..." line per check; exits non-zero with the reason on the first failure.
"""

import base64
import json
import sys
import uuid

import requests
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from http_message_signatures import (
    HTTPMessageSigner,
    HTTPMessageVerifier,
    HTTPSignatureKeyResolver,
)
from http_message_signatures.algorithms import ECDSA_P256_SHA256

GOOGLE_COMPONENTS = ("@method", "@path", "@authority", "content-type", "content-digest", "idempotency-key")


class Keys(HTTPSignatureKeyResolver):
    def __init__(self, private=None, public=None):
        self.private = private
        self.public = public

    def resolve_private_key(self, key_id):
        return self.private

    def resolve_public_key(self, key_id):
        return self.public


def fail(reason):
    print(f"FAIL: {reason}")
    sys.exit(1)


def signed(method, url, body, headers, signer, kid):
    request = requests.Request(method, url, data=body, headers=headers).prepare()
    signer.sign(
        request,
        key_id=kid,
        label="sig-ucp",
        tag="ucp-rest-request",
        include_alg=False,
        covered_component_ids=GOOGLE_COMPONENTS,
        body=body,
    )
    return request


def main():
    base_url, profile_url, pem_path, kid = sys.argv[1:5]
    with open(pem_path, "rb") as file:
        private = load_pem_private_key(file.read(), password=None)
    signer = HTTPMessageSigner(signature_algorithm=ECDSA_P256_SHA256, key_resolver=Keys(private=private))
    session = requests.Session()
    agent = f'profile="{profile_url}"'

    # 1. MCP tools/call signed by Python: accepted under policy = enforce.
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "search_catalog",
            "arguments": {"meta": {"ucp-agent": {"profile": profile_url}}, "catalog": {"query": "wool"}},
        },
    }
    body = json.dumps(call, indent=1).encode()
    headers = {"Content-Type": "application/json", "Idempotency-Key": str(uuid.uuid4()), "UCP-Agent": agent}
    response = session.send(signed("POST", f"{base_url}/ucp/mcp", body, headers, signer, kid))
    if response.status_code != 200 or "result" not in response.json():
        fail(f"signed MCP call answered {response.status_code}: {response.text}")
    print("ok: MCP request signed by http-message-signatures verified")

    # 2. The same over REST.
    rest_body = json.dumps({"query": "wool"}).encode()
    rest_headers = dict(headers, **{"Request-Id": str(uuid.uuid4())})
    response = session.send(signed("POST", f"{base_url}/ucp/v1/catalog/search", rest_body, rest_headers, signer, kid))
    if response.status_code != 200:
        fail(f"signed REST call answered {response.status_code}: {response.text}")
    print("ok: REST request signed by http-message-signatures verified")

    # 3. One body byte flipped after signing: digest_mismatch.
    request = signed("POST", f"{base_url}/ucp/mcp", body, dict(headers), signer, kid)
    request.body = request.body.replace(b"wool", b"woom")
    response = session.send(request)
    code = response.json().get("error", {}).get("data", {}).get("code")
    if response.status_code != 400 or code != "digest_mismatch":
        fail(f"tampered body answered {response.status_code} {code}: {response.text}")
    print("ok: tampered body refused with digest_mismatch")

    # 4. ucpd's signed complete_checkout response, verified with its published JWK.
    profile = session.get(f"{base_url}/.well-known/ucp").json()
    jwk = profile["signing_keys"][0]
    if profile["keys"][0] != jwk:
        fail("keys and signing_keys differ")
    coordinate = lambda name: int.from_bytes(base64.urlsafe_b64decode(jwk[name] + "=" * (-len(jwk[name]) % 4)), "big")
    public = ec.EllipticCurvePublicNumbers(coordinate("x"), coordinate("y"), ec.SECP256R1()).public_key()
    complete = {
        "jsonrpc": "2.0",
        "id": 8,
        "method": "tools/call",
        "params": {
            "name": "complete_checkout",
            "arguments": {
                "meta": {"ucp-agent": {"profile": profile_url}, "idempotency-key": str(uuid.uuid4())},
                "id": "chk_does_not_exist",
            },
        },
    }
    body = json.dumps(complete).encode()
    response = session.send(signed("POST", f"{base_url}/ucp/mcp", body, dict(headers), signer, kid))
    if "Signature-Input" not in response.headers:
        fail(f"complete_checkout response is not signed: {dict(response.headers)}")
    verifier = HTTPMessageVerifier(signature_algorithm=ECDSA_P256_SHA256, key_resolver=Keys(public=public))
    results = verifier.verify(response)
    results = verifier.verify_body(response, results, response.content)
    covered = [name.strip('"') for name in results[0].covered_components]
    if results[0].parameters.get("keyid") != jwk["kid"] or "@status" not in covered or results[0].body is None:
        fail(f"unexpected response signature: {results[0]}")
    print("ok: complete_checkout response signature and Content-Digest verified with the published JWK")


if __name__ == "__main__":
    main()
