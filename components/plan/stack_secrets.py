"""`secure:` values of a stack file checked offline: made by the Pulumi CLI, and for this stack's passphrase.

The passphrase secrets manager of the pinned CLI (github.com/pulumi/pulumi v3.274.0,
pkg/secrets/passphrase/manager.go L164-178 and sdk/go/common/resource/config/crypt.go L165-235) writes
`encryptionsalt: v1:<8-byte salt>:v1:<12-byte nonce>:<"pulumi" encrypted>` and each value as
`v1:<12-byte nonce>:<ciphertext>`, all standard base64, AES-256-GCM (16-byte tag) under a key of
PBKDF2-SHA256(passphrase, salt, 1,000,000 rounds, 32 bytes). Cloud providers write one base64 blob.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import os
from pathlib import Path
from typing import Any, Iterator, Optional

from components.config.invocation import current

NONCE_BYTES, TAG_BYTES, SALT_BYTES = 12, 16, 8
CHECK_TEXT = "pulumi"


def secure_values(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """(config path, ciphertext) of every `{secure: text}` inside a config value."""
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("secure"), str):
        yield path, value["secure"]
    elif isinstance(value, dict):
        for key, child in value.items():
            yield from secure_values(child, f"{path}.{key}")
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from secure_values(child, f"{path}[{index}]")


def _b64(text: str) -> Optional[bytes]:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _sealed(text: str, least: int) -> Optional[tuple[bytes, bytes]]:
    """(nonce, ciphertext) of a `v1:` value shaped as the CLI writes it, else None."""
    parts = text.split(":")
    if len(parts) != 3 or parts[0] != "v1":
        return None
    nonce, sealed = _b64(parts[1]), _b64(parts[2])
    if nonce is None or sealed is None or len(nonce) != NONCE_BYTES or len(sealed) < least:
        return None
    return nonce, sealed


def _passphrase() -> Optional[str]:
    """The passphrase the CLI would use: PULUMI_CONFIG_PASSPHRASE, else the file PULUMI_CONFIG_PASSPHRASE_FILE."""
    if "PULUMI_CONFIG_PASSPHRASE" in os.environ:
        return os.environ["PULUMI_CONFIG_PASSPHRASE"]
    name = os.environ.get("PULUMI_CONFIG_PASSPHRASE_FILE")
    try:
        return Path(name).read_text().rstrip("\r\n") if name else None
    except OSError:
        return None


def _opener(salt: bytes, passphrase: str):
    """AES-256-GCM open() under the passphrase's key, or None when the cipher library is missing."""
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        return None
    key = hashlib.pbkdf2_hmac("sha256", passphrase.encode(), salt, 1_000_000, 32)
    aead = AESGCM(key)

    def open_(nonce: bytes, sealed: bytes) -> Optional[bytes]:
        try:
            return aead.decrypt(nonce, sealed, None)
        except Exception:  # cryptography raises InvalidTag; any failure means "not ours"
            return None
    return open_


def secure_problems(stack: str, data: dict[str, Any]) -> list[str]:
    """One line per `secure:` value the Pulumi CLI could not have written for this stack, with the fix."""
    found = [(key, text) for name, value in (data.get("config") or {}).items()
             for key, text in secure_values(value, str(name))]
    offline = current(stack).without("<key>")
    fix = (f"make a real one with `pulumi config set --secret --stack {stack} <key> <value>` (a file: `... < file`)"
           + (f", or run without it: `{offline}`" if offline else ""))
    salt_text = data.get("encryptionsalt")
    if salt_text is None:
        return [f"{key[:80]}: a cloud secrets provider writes standard base64; this is not; {fix}"
                for key, text in found if _b64(text) is None or not text]
    if not isinstance(salt_text, str):
        return [f"encryptionsalt: is not the text `pulumi stack init` writes; delete the line and run "
                f"`pulumi stack init {stack}`"]
    salt, _, check = salt_text.partition(":v1:")
    salt_bytes = _b64(salt.removeprefix("v1:")) if salt.startswith("v1:") else None
    sealed_check = _sealed("v1:" + check, len(CHECK_TEXT) + TAG_BYTES)
    if salt_bytes is None or len(salt_bytes) != SALT_BYTES or sealed_check is None \
            or len(sealed_check[1]) != len(CHECK_TEXT) + TAG_BYTES:
        return [f"encryptionsalt: not written by `pulumi stack init` (it holds an 8-byte salt and `pulumi` sealed "
                f"with it); a copied stack file keeps another stack's: delete the line and every `secure:` value, "
                f"run `pulumi stack init {stack}` and set each secret again"]
    problems = [f"{key[:80]}: `secure:` is not a value the Pulumi CLI writes (v1:<12-byte nonce>:<ciphertext>, "
                f"base64); {fix}" for key, text in found if _sealed(text, TAG_BYTES) is None]
    phrase = _passphrase()
    opener = _opener(salt_bytes, phrase) if phrase is not None and not problems else None
    if opener is None:
        return problems
    if opener(*sealed_check) != CHECK_TEXT.encode():
        return ["encryptionsalt: PULUMI_CONFIG_PASSPHRASE is not this stack's passphrase (the CLI would refuse it "
                "too); set the right one, or unset it to plan with placeholders"]
    return [f"{key[:80]}: `secure:` does not decrypt with this stack's passphrase: it was copied from another stack "
            f"or invented; {fix}" for key, text in found if opener(*_sealed(text, TAG_BYTES)) is None]
