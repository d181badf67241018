"""Signs and checks webhook bodies with the payment providers' own Python libraries.

    provider_sign.py sign   < {"items": [{"provider", "secrets", "timestamp", "body"}]}   -> {"headers": [...]}
    provider_sign.py verify < {"items": [{"provider", "secrets", "header", "body", "tolerance"}]} -> {"verdicts": [...]}

Stripe: stripe-python's WebhookSignature (generate_signature_header, "useful for signing payloads in unit
tests"; verify_header). Paddle: paddle-python-sdk's PaddleSignature (calculate_hmac, and verify, which
checks every h1 against every secret). The tests sign the events linkout takes with these, and check
linkout's own signer against them, so linkout's verifier is compared with code it did not write.
"""
import json
import sys

import stripe
from paddle_billing.Notifications.PaddleSignature import PaddleSignature
from paddle_billing.Notifications.Secret import Secret


def sign(item):
    body = item["body"]
    timestamp = int(item["timestamp"])
    if item["provider"] == "stripe":
        # One v1 per secret, as Stripe sends during a rotation.
        headers = [stripe.WebhookSignature.generate_signature_header(body, secret, timestamp) for secret in item["secrets"]]
        return ",".join([headers[0]] + [h.split(",", 1)[1] for h in headers[1:]])
    parts = ["ts=%d" % timestamp]
    for secret in item["secrets"]:
        mac = PaddleSignature.calculate_hmac(secret, ("%d:%s" % (timestamp, body)).encode("utf-8"))
        parts.append("h1=" + mac.hexdigest())
    return ";".join(parts)


def verify(item):
    body = item["body"]
    try:
        if item["provider"] == "stripe":
            ok = any(_stripe_ok(body, item["header"], secret, item.get("tolerance")) for secret in item["secrets"])
        else:
            ok = PaddleSignature().verify(item["header"], body, [Secret(s) for s in item["secrets"]])
        return "ok" if ok else "mismatch"
    except Exception as error:  # noqa: BLE001 - the verdict is the test's to judge
        return "error: %s" % error


def _stripe_ok(body, header, secret, tolerance):
    try:
        return stripe.WebhookSignature.verify_header(body, header, secret, tolerance)
    except stripe.SignatureVerificationError:
        return False


def main():
    request = json.load(sys.stdin)
    if sys.argv[1] == "sign":
        print(json.dumps({"headers": [sign(item) for item in request["items"]]}))
    else:
        print(json.dumps({"verdicts": [verify(item) for item in request["items"]]}))


if __name__ == "__main__":
    main()
