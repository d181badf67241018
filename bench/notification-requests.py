#!/usr/bin/env python3
"""Makes bench/notifications' requests: raw HTTP/1.1 POSTs to linkout's notification path, each ended by a
NUL byte, as `rate-client -f` sends them in turn.

    notification-requests.py FOLDER [COUNT]

FOLDER gets chain/ (the test chain of Tests/LinkOutIntegrationTests/Support/notification_chain.py: linkout
is configured to trust chain/root.pem), and one requests file per kind, each request from its own client
address (X-Forwarded-For: 10.x.y.z, believed from 127.0.0.1), plus a `-one` variant of the flood kinds
whose requests all come from 10.0.0.1:

  garbage           {"signedPayload": "eyJhbGciOiJFUzI1NiJ9.e30.AAAA"} (a JWS with no x5c, a 3-byte signature)
  forged            one well-formed notification signed by a foreign chain (its own root), sent again and again
  forged-distinct   COUNT of them, each with a chain of its own: every one is new to linkout
  forged-root-name  COUNT chains whose intermediate names the trusted root as its issuer (and its key id) but
                    is signed by another key: they pass every check by name, so each costs the chain's
                    signature checks; each chain is new
  bad-signature     the trusted chain, the payload changed after signing (one, again and again)
  valid             COUNT valid TEST notifications (each a new notificationUUID: each is stored)

COUNT (default 2000) exceeds linkout's chain verdict cache (1,024), so cycling through them never hits it.
"""
import base64
import datetime
import json
import os
import subprocess
import sys
import uuid

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

HERE = os.path.dirname(os.path.abspath(__file__))
CHAIN_SCRIPT = os.path.join(HERE, "..", "Tests", "LinkOutIntegrationTests", "Support", "notification_chain.py")
INTERMEDIATE_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")
LEAF_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
NOW = datetime.datetime.now(datetime.timezone.utc)
SIGNED_DATE = int(NOW.timestamp() * 1000)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def der_b64(cert):
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()


def jws(x5c, key, payload, tamper=False):
    head = b64url(json.dumps({"alg": "ES256", "x5c": x5c}, separators=(",", ":")).encode())
    body = b64url(json.dumps(payload, separators=(",", ":")).encode())
    r, s = decode_dss_signature(key.sign(f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256())))
    if tamper:
        changed = dict(payload, notificationUUID=str(uuid.uuid4()))
        body = b64url(json.dumps(changed, separators=(",", ":")).encode())
    return f"{head}.{body}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def payload(kind="TEST"):
    return {"notificationType": kind, "notificationUUID": str(uuid.uuid4()), "version": "2.0", "signedDate": SIGNED_DATE,
            "data": {"bundleId": "com.example", "appAppleId": 1234567890, "environment": "Production"}}


def certificate(subject, key, issuer_name, issuer_key, ca, oid=None, aki_from=None):
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - datetime.timedelta(days=1))
        .not_valid_after(NOW + datetime.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), critical=True)
        .add_extension(
            x509.KeyUsage(digital_signature=not ca, content_commitment=False, key_encipherment=False, data_encipherment=False,
                          key_agreement=False, key_cert_sign=ca, crl_sign=ca, encipher_only=False, decipher_only=False),
            critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )
    if aki_from is not None:
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(aki_from), critical=False)
    if oid is not None:
        builder = builder.add_extension(x509.UnrecognizedExtension(oid, b"\x05\x00"), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def name(common):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "forger")])


def forged_chain(index, root_name=None, root_public_key=None):
    """A leaf and intermediate of their own; the intermediate names `root_name` as its issuer if given (signed
    by a key that is not that root's), else a root of its own."""
    root_key = ec.generate_private_key(ec.SECP256R1())
    if root_name is None:
        root_name, root_public_key = name(f"forged root {index}"), root_key.public_key()
    root = certificate(root_name, root_key, root_name, root_key, ca=True)
    intermediate_key = ec.generate_private_key(ec.SECP256R1())
    intermediate = certificate(name(f"forged intermediate {index}"), intermediate_key, root_name, root_key, ca=True,
                               oid=INTERMEDIATE_OID, aki_from=root_public_key)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = certificate(name(f"forged leaf {index}"), leaf_key, intermediate.subject, intermediate_key, ca=False,
                       oid=LEAF_OID, aki_from=intermediate_key.public_key())
    return [der_b64(leaf), der_b64(intermediate), der_b64(root)], leaf_key


def request(body, client):
    data = json.dumps({"signedPayload": body}, separators=(",", ":")).encode() if not isinstance(body, bytes) else body
    head = (f"POST /apple/notifications HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"X-Forwarded-For: {client}\r\nContent-Length: {len(data)}\r\n\r\n").encode()
    return head + data + b"\0"


def client(index):
    return f"10.{(index >> 16) & 255}.{(index >> 8) & 255}.{index & 255 or 1}"


def write(folder, kind, bodies, one_client=False):
    with open(os.path.join(folder, f"{kind}{'-one' if one_client else ''}.requests"), "wb") as out:
        for index, body in enumerate(bodies):
            out.write(request(body, "10.0.0.1" if one_client else client(index + 1)))


def main():
    folder = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    chain = os.path.join(folder, "chain")
    os.makedirs(chain, exist_ok=True)
    subprocess.run([sys.executable, CHAIN_SCRIPT, chain], check=True)

    def read(name):
        with open(os.path.join(chain, name)) as file:
            return file.read().strip()

    trusted = [read("leaf.b64"), read("intermediate.b64"), read("root.b64")]
    leaf_key = serialization.load_pem_private_key(read("leaf.key").encode(), None)
    foreign = [read("other-leaf.b64"), read("other-intermediate.b64"), read("other-root.b64")]
    foreign_key = serialization.load_pem_private_key(read("other-leaf.key").encode(), None)
    with open(os.path.join(chain, "root.pem"), "rb") as file:
        root = x509.load_pem_x509_certificate(file.read())

    garbage = [b'{"signedPayload": "eyJhbGciOiJFUzI1NiJ9.e30.AAAA"}'] * 100
    forged = [jws(foreign, foreign_key, payload())] * 100
    distinct = []
    for index in range(count):
        x5c, key = forged_chain(index)
        distinct.append(jws(x5c, key, payload()))
    root_name = []
    for index in range(count):
        x5c, key = forged_chain(index, root.subject, root.public_key())
        root_name.append(jws(x5c, key, payload()))
    bad_signature = [jws(trusted, leaf_key, payload(), tamper=True)] * 100
    valid = [jws(trusted, leaf_key, payload()) for _ in range(count)]
    for kind, bodies in [("garbage", garbage), ("forged", forged), ("forged-distinct", distinct), ("forged-root-name", root_name),
                         ("bad-signature", bad_signature), ("valid", valid)]:
        write(folder, kind, bodies)
        write(folder, kind, bodies, one_client=True)


if __name__ == "__main__":
    main()
