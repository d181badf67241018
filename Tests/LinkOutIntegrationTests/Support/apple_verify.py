#!/usr/bin/env python3
"""The cross-check: Apple's own Python library (app-store-server-library on PyPI) verifies notifications
that linkout's tests made, trusting only the tests' root, with no online (OCSP) checks.

    apple_verify.py ROOT.der BUNDLE_ID APP_APPLE_ID < payloads

reads one signedPayload per line and writes one JSON object per line: {"ok": true, "notificationType",
"subtype", "notificationUUID", "signedDate", "externalPurchaseToken": {...}} with the token's fields as
the library decoded them, or {"ok": false, "error": "..."}. The environment is chosen per payload from the
token id's SANDBOX prefix, as Apple's library itself decides it for this notification type.
"""
import json
import sys

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier


def main():
    root_path, bundle_id, app_apple_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(root_path, "rb") as handle:
        root = handle.read()
    verifiers = {
        environment: SignedDataVerifier(
            root_certificates=[root], enable_online_checks=False, environment=environment,
            bundle_id=bundle_id, app_apple_id=app_apple_id)
        for environment in (Environment.PRODUCTION, Environment.SANDBOX)
    }
    for line in sys.stdin:
        payload = line.strip()
        if not payload:
            continue
        # The payload's token id decides the environment; read unverified only to choose the verifier.
        import jwt
        claims = jwt.decode(payload, options={"verify_signature": False})
        token_id = (claims.get("externalPurchaseToken") or {}).get("externalPurchaseId", "")
        environment = Environment.SANDBOX if token_id.startswith("SANDBOX") else Environment.PRODUCTION
        try:
            decoded = verifiers[environment].verify_and_decode_notification(payload)
        except Exception as error:  # VerificationException, with its status
            print(json.dumps({"ok": False, "error": repr(error)}), flush=True)
            continue
        token = decoded.externalPurchaseToken
        print(json.dumps({
            "ok": True,
            "notificationType": decoded.rawNotificationType,
            "subtype": decoded.rawSubtype,
            "notificationUUID": decoded.notificationUUID,
            "signedDate": decoded.signedDate,
            "externalPurchaseToken": None if token is None else {
                "externalPurchaseId": token.externalPurchaseId,
                "tokenCreationDate": token.tokenCreationDate,
                "appAppleId": token.appAppleId,
                "bundleId": token.bundleId,
            },
        }), flush=True)


if __name__ == "__main__":
    main()
