#!/usr/bin/env python3
"""Makes the test chains for Apple's notifications, in the shape of Apple's: a root CA, an intermediate
carrying Apple's WWDR OID 1.2.840.113635.100.6.2.1 and a leaf carrying 1.2.840.113635.100.6.11.1, all
P-256, with the extensions OpenSSL's strict mode (which Apple's Python library turns on) requires.

    notification_chain.py FOLDER

writes, in FOLDER: root.pem, root.der; for x5c (base64 DER, one line each): leaf.b64, intermediate.b64,
root.b64; leaf.key (PKCS#8 PEM, the key the tests sign with); and the broken ones: leaf-no-oid.b64,
leaf-expired.b64 (valid 2020 only), intermediate-no-oid.b64 with leaf-of-plain-intermediate.b64,
forged-intermediate.b64 (the root's name, another key's signature) with leaf-of-forged-intermediate.b64, and a
whole chain to another root (other-leaf.b64, other-intermediate.b64, other-root.b64, other-leaf.key).
Made with the cryptography package, which takes any validity dates (openssl x509 on Debian 12 does not).
"""
import base64
import datetime
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

INTERMEDIATE_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")
LEAF_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
NULL = b"\x05\x00"
NOW = datetime.datetime.now(datetime.timezone.utc)


def name(common):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "linkout tests")])


def certificate(subject, key, issuer=None, issuer_key=None, ca=False, oid=None, not_before=None, not_after=None):
    issuer = issuer or (subject, key, None)
    issuer_name, issuer_private, issuer_cert = issuer[0], issuer_key or issuer[1], issuer[2]
    builder = (
        x509.CertificateBuilder()
        .subject_name(name(subject))
        .issuer_name(name(issuer_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before or NOW - datetime.timedelta(days=1))
        .not_valid_after(not_after or NOW + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca and issuer_cert is not None else None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=not ca, content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, key_cert_sign=ca, crl_sign=ca, encipher_only=False, decipher_only=False),
            critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )
    if issuer_cert is not None:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_cert.public_key()), critical=False)
    if oid is not None:
        builder = builder.add_extension(x509.UnrecognizedExtension(oid, NULL), critical=False)
    return builder.sign(issuer_private, hashes.SHA256())


def der_b64(cert):
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()


def chain(prefix, folder, extras=False):
    root_key = ec.generate_private_key(ec.SECP256R1())
    root = certificate(prefix + "root", root_key, ca=True)
    intermediate_key = ec.generate_private_key(ec.SECP256R1())
    intermediate = certificate(prefix + "intermediate", intermediate_key, issuer=(prefix + "root", root_key, root), ca=True, oid=INTERMEDIATE_OID)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    by_intermediate = (prefix + "intermediate", intermediate_key, intermediate)
    leaf = certificate(prefix + "leaf", leaf_key, issuer=by_intermediate, oid=LEAF_OID)
    files = {"leaf": leaf, "intermediate": intermediate, "root": root}
    if extras:
        files["leaf-no-oid"] = certificate(prefix + "leaf", leaf_key, issuer=by_intermediate)
        files["leaf-expired"] = certificate(
            prefix + "leaf", leaf_key, issuer=by_intermediate, oid=LEAF_OID,
            not_before=datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc),
            not_after=datetime.datetime(2021, 1, 1, tzinfo=datetime.timezone.utc))
        plain_key = ec.generate_private_key(ec.SECP256R1())
        plain = certificate(prefix + "plain-intermediate", plain_key, issuer=(prefix + "root", root_key, root), ca=True)
        files["intermediate-no-oid"] = plain
        files["leaf-of-plain-intermediate"] = certificate(
            prefix + "leaf", leaf_key, issuer=(prefix + "plain-intermediate", plain_key, plain), oid=LEAF_OID)
        # An intermediate that names the root as its issuer but is signed by another key: every check by
        # name passes, only the chain's signature fails. Its leaf is signed with the real leaf key.
        forger_key = ec.generate_private_key(ec.SECP256R1())
        forged = certificate(prefix + "intermediate", intermediate_key, issuer=(prefix + "root", root_key, root),
                             issuer_key=forger_key, ca=True, oid=INTERMEDIATE_OID)
        files["forged-intermediate"] = forged
        files["leaf-of-forged-intermediate"] = certificate(
            prefix + "leaf", leaf_key, issuer=(prefix + "intermediate", intermediate_key, forged), oid=LEAF_OID)
        with open(f"{folder}/root.pem", "wb") as out:
            out.write(root.public_bytes(serialization.Encoding.PEM))
        with open(f"{folder}/root.der", "wb") as out:
            out.write(root.public_bytes(serialization.Encoding.DER))
    for label, cert in files.items():
        with open(f"{folder}/{prefix}{label}.b64", "w") as out:
            out.write(der_b64(cert) + "\n")
    with open(f"{folder}/{prefix}leaf.key", "wb") as out:
        out.write(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


if __name__ == "__main__":
    target = sys.argv[1]
    chain("", target, extras=True)
    chain("other-", target)
