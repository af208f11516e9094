"""How gopkg.in/yaml.v3 (v3.0.1, resolve.go) reads an unquoted scalar decoded into `any`, as the Pulumi CLI does."""
from __future__ import annotations

import datetime
import math
import re
from typing import Any

TRUE, FALSE, NULL = {"true", "True", "TRUE"}, {"false", "False", "FALSE"}, {"", "~", "null", "Null", "NULL"}
SPECIAL_FLOATS = {".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"}
GO_INT = re.compile(r"([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
GO_BASE = {"x": 16, "o": 8, "b": 2}
YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")  # yaml.v3 yamlStyleFloat
LEADING_ZERO = re.compile(r"[-+]?0[0-9_]")
# yaml.v3's allowedTimestampFormats (resolve.go): date, date T time zone, date space time.
TIMESTAMP = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})"
                       r"([Tt]\d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?(Z|[+-]\d{2}:\d{2})| \d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?)?")


def resolve_plain(text: str) -> Any:
    """What yaml.v3 makes of an unquoted scalar decoded into `any` (resolve.go, v3.0.1)."""
    if text in TRUE or text in FALSE:
        return text in TRUE
    if text in NULL:
        return None
    if text in SPECIAL_FLOATS:
        return float(text.replace(".", "").lower().replace("+", ""))
    if not text or text[0] not in "+-.0123456789":
        return text  # timestamps, `yes`, `on`, `1:20` and the like stay text
    plain = text.replace("_", "")
    match = GO_INT.fullmatch(plain)
    if match:
        sign, digits = match.groups()
        if len(digits) > 1 and digits[1] in "xXoObB":
            number = int(digits[2:], GO_BASE[digits[1].lower()])
        else:
            number = int(digits, 8 if digits.startswith("0") else 10)
        number = -number if sign == "-" else number
        if -2**63 <= number < 2**64 and not (number >= 2**63 and sign):
            return number
    if YAML_FLOAT.fullmatch(plain):
        number = float(plain)
        return text if math.isinf(number) else number  # Go refuses an out-of-range float: it stays text
    return text


def is_timestamp(text: str) -> bool:
    """A plain scalar yaml.v3 turns into a time.Time (a valid calendar date in one of its formats)."""
    match = TIMESTAMP.fullmatch(text)
    if match is None:
        return False
    try:
        datetime.date(*(int(part) for part in match.groups()[:3]))
    except ValueError:
        return False
    return True


def number_text(value: Any) -> str:
    """A resolved scalar as a problem says it: 72, 8, the boolean true."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if value is None:
        return "null"
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
