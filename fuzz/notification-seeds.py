#!/usr/bin/env python3
"""Makes fuzz-notification's fixed test chain and its seeds (run once; both are committed):

    fuzz/notification-seeds.py

- Sources/fuzz-notification/TestChain.swift: a root, intermediate and leaf in Apple's shape (by
  Tests/LinkOutIntegrationTests/Support/notification_chain.py), the root trusted by the harness, the leaf's
  key to sign with. The harness checks at each notification's signedDate, never at the wall clock, so the
  seeds stay valid after the certificates expire.
- corpus/notification/: one file per seed, its first byte the harness's mode (0 a body, 1 a payload the
  harness signs, 2 a header it signs): valid notifications of each kind, and each way of being refused.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

HERE = os.path.dirname(os.path.abspath(__file__))
CHAIN_SCRIPT = os.path.join(HERE, "..", "Tests", "LinkOutIntegrationTests", "Support", "notification_chain.py")
SIGNED = 1798761600000  # 2027-01-01T00:00:00Z, inside the chain's validity


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def dumps(value):
    return json.dumps(value, separators=(",", ":")).encode()


def main():
    folder = tempfile.mkdtemp()
    subprocess.run([sys.executable, CHAIN_SCRIPT, folder], check=True)

    def read(name):
        with open(os.path.join(folder, name)) as file:
            return file.read().strip()

    chains = {
        "valid": [read("leaf.b64"), read("intermediate.b64"), read("root.b64")],
        "other-root": [read("other-leaf.b64"), read("other-intermediate.b64"), read("other-root.b64")],
        "leaf-no-oid": [read("leaf-no-oid.b64"), read("intermediate.b64"), read("root.b64")],
        "intermediate-no-oid": [read("leaf-of-plain-intermediate.b64"), read("intermediate-no-oid.b64"), read("root.b64")],
        "expired-leaf": [read("leaf-expired.b64"), read("intermediate.b64"), read("root.b64")],
        "two-certificates": [read("leaf.b64"), read("intermediate.b64")],
    }
    keys = {name: serialization.load_pem_private_key(read(f"{name}.key").encode(), None) for name in ("leaf", "other-leaf")}

    with open(os.path.join(HERE, "Sources", "fuzz-notification", "TestChain.swift"), "w") as out:
        out.write("// Made by fuzz/notification-seeds.py (Tests/LinkOutIntegrationTests/Support/notification_chain.py's chain);\n"
                  "// the seeds in corpus/notification are signed with it. A test chain: nothing here is a secret.\n"
                  "enum TestChain {\n")
        out.write(f'    static let rootPEM = """\n{indent(read("root.pem"))}\n        """\n')
        out.write(f'    static let leafKeyPEM = """\n{indent(read("leaf.key"))}\n        """\n')
        for name, value in zip(("leaf", "intermediate", "root"), chains["valid"]):
            out.write(f'    static let {name} = "{value}"\n')
        out.write("}\n")

    def sign(header, payload, key="leaf", tamper=None):
        head, body = b64url(header), b64url(payload)
        r, s = decode_dss_signature(keys[key].sign(f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256())))
        if tamper is not None:
            body = b64url(tamper)
        return f"{head}.{body}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"

    def header(chain="valid", alg="ES256"):
        return dumps({"alg": alg, "x5c": chains[chain]})

    def payload(kind="TEST", subtype=None, token=None, data=None, signed=SIGNED, uuid="seed-uuid"):
        value = {"notificationType": kind, "notificationUUID": uuid, "signedDate": signed, "version": "2.0"}
        if subtype is not None:
            value["subtype"] = subtype
        if token is not None:
            value["externalPurchaseToken"] = token
        if data is not None:
            value["data"] = data
        return dumps(value)

    def token(id="00000000-0000-0000-0000-000000000001", bundle="com.example", app=1234567890, **extra):
        value = {"externalPurchaseId": id, "tokenCreationDate": SIGNED - 864000000, "bundleId": bundle}
        if app is not None:
            value["appAppleId"] = app
        value.update(extra)
        return value

    def body(jws):
        return dumps({"signedPayload": jws})

    unreported = payload("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED", token())
    seeds = {
        # Mode 0: bodies.
        "valid-test": body(sign(header(), payload())),
        "valid-unreported": body(sign(header(), unreported)),
        "valid-created": body(sign(header(), payload("EXTERNAL_PURCHASE_TOKEN", "CREATED", token(
            "SANDBOX_custom-1", tokenType="ACQUISITION", tokenExpirationDate=SIGNED + 86400000)))),
        "valid-sandbox-no-app-id": body(sign(header(), payload("EXTERNAL_PURCHASE_TOKEN", "ACTIVE_TOKEN_REMINDER", token("SANDBOX_2", app=None)))),
        "valid-other-type": body(sign(header(), payload("DID_RENEW", data={"bundleId": "com.example", "appAppleId": 1234567890,
                                                                          "environment": "Sandbox", "signedTransactionInfo": "a.b.c"}))),
        "other-root": body(sign(header("other-root"), unreported, key="other-leaf")),
        "leaf-no-oid": body(sign(header("leaf-no-oid"), unreported)),
        "intermediate-no-oid": body(sign(header("intermediate-no-oid"), unreported)),
        "expired-leaf": body(sign(header("expired-leaf"), unreported)),
        "two-certificates": body(sign(header("two-certificates"), unreported)),
        "tampered": body(sign(header(), unreported, tamper=payload("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED", token(), uuid="other"))),
        "alg-hs256": body(sign(header(alg="HS256"), unreported)),
        "signed-after-9999": body(sign(header(), payload(signed=1000000000000000))),
        "unknown-app": body(sign(header(), payload("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED", token(bundle="com.other")))),
        "wrong-app-apple-id": body(sign(header(), payload("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED", token(app=42)))),
        "garbage": b'{"signedPayload": "eyJhbGciOiJFUzI1NiJ9.e30.AAAA"}',
        "short-signature": body(sign(header(), unreported)[:-10]),
        "x5c-not-der": body(sign(dumps({"alg": "ES256", "x5c": ["AAAA", "AAAA", "AAAA"]}), unreported)),
        "not-json": b'{"signedPayload": ',
        "no-signed-payload": b'{"payload": "a.b.c"}',
        # Mode 1: payloads, signed by the harness.
        "payload-unreported": unreported,
        "payload-created": payload("EXTERNAL_PURCHASE_TOKEN", "CREATED", token(tokenType="SERVICES", tokenExpirationDate=SIGNED)),
        "payload-no-uuid": dumps({"notificationType": "TEST", "signedDate": SIGNED}),
        "payload-date-string": dumps({"notificationType": "TEST", "notificationUUID": "u", "signedDate": "2027-01-01"}),
        "payload-token-missing-fields": payload("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED", {"externalPurchaseId": "x"}),
        "payload-summary": payload("RENEWAL_EXTENSION", "SUMMARY", data=None) [:-1] + b',"summary":{"bundleId":"com.example","appAppleId":1}}',
        # Mode 2: headers, signed by the harness.
        "header-valid": header(),
        "header-alg-none": header(alg="none"),
        "header-four-certificates": dumps({"alg": "ES256", "x5c": chains["valid"] + [chains["valid"][0]]}),
        "header-other-root": header("other-root"),
        "header-x5c-numbers": dumps({"alg": "ES256", "x5c": [1, 2, 3]}),
    }
    corpus = os.path.join(HERE, "corpus", "notification")
    os.makedirs(corpus, exist_ok=True)
    for name in os.listdir(corpus):
        os.remove(os.path.join(corpus, name))
    for name, data in seeds.items():
        mode = b"\x01" if name.startswith("payload-") else b"\x02" if name.startswith("header-") else b"\x00"
        with open(os.path.join(corpus, name), "wb") as out:
            out.write(mode + data)


def indent(text):
    return "\n".join("        " + line for line in text.splitlines())


if __name__ == "__main__":
    main()
