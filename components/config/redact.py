"""What a problem may show of a value: a short preview, never key material, tokens or credentials."""
from __future__ import annotations

import re
from typing import Any

PREVIEW_CHARS = 24
KEY_MATERIAL = re.compile(
    r"-----BEGIN|PRIVATE KEY|"                          # PEM blocks, whatever their kind
    r"AAAA[BC][0-9A-Za-z+/]{16,}|"                      # ssh key blobs (public and openssh private)
    r"b3BlbnNzaC1rZXktdjE|"                             # 'openssh-key-v1', base64
    r"\bv1:[0-9A-Za-z+/=]{8,}:|"                        # Pulumi ciphertext
    r"\b(gh[pousr]|glpat|xox[abpr]|sk|AKIA|ASIA|eyJ)[-_0-9A-Za-z]{12,}",  # common token shapes
    re.IGNORECASE)
URL_CREDENTIALS = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@\s]*:[^/@\s]*@|^[^/@\s:]+:[^/@\s]+@", re.IGNORECASE)
SECRET_WORDS = re.compile(r"pass(word|wd)?|secret|token|api[-_]?key|private|credential|signature|^sig$|^auth",
                          re.IGNORECASE)


def looks_secret(text: str) -> bool:
    """Key material, a token, a ciphertext, credentials in a URL, or a long run of random-looking characters."""
    if KEY_MATERIAL.search(text) or URL_CREDENTIALS.search(text):
        return True
    for run in re.findall(r"[0-9A-Za-z+/=_-]{32,}", text):
        if re.fullmatch(r"[0-9a-fA-F]+", run) is None and len(set(run)) > 16:
            return True
    return False


def preview(value: Any) -> str:
    """A value as a problem may show it: short text quoted and cut, a shape for lists and mappings."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return "a secure value (not shown)"
        keys = ", ".join(preview_key(k) for k in list(value)[:4]) + (", ..." if len(value) > 4 else "")
        return f"a mapping (keys {keys})" if value else "an empty mapping"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)} item(s)" if value else "an empty list"
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "null"
    if isinstance(value, (int, float)):
        text = str(value)
        return text if len(text) <= PREVIEW_CHARS else f"a number of {len(text)} digits"
    text = str(value)
    if text.startswith("[secret"):
        return "a secret value (not shown)"
    if looks_secret(text):
        return f"a value that looks like a secret or key material ({len(text)} characters, not shown)"
    shown = text.replace("\n", "\\n")
    if len(shown) > PREVIEW_CHARS:
        return f"'{shown[:PREVIEW_CHARS - 8]}...' ({len(text)} characters)"
    return f"'{shown}'"


def preview_key(key: Any) -> str:
    """A mapping key as a problem may show it."""
    text = str(key)
    if looks_secret(text):
        return "<a key that looks like a secret>"
    return text if len(text) <= 40 else text[:32] + "..."
