"""Order of Huawei release numbers, so a downgrade is seen before any installer runs.

`24.1.rc2` < `24.1.rc3` < `24.1.0`, `8.0.RC3` < `8.0.0`, `v6.0.0` = `6.0.0`, `25.0.rc1.1` > `25.0.rc1`: numbers
compare as numbers, a release candidate comes before the release of the same numbers. `newer INSTALLED WANTED`
exits 0 when INSTALLED is the newer one, 1 when it is not, 2 when the two cannot be ordered.
"""
import re
import sys

PART = re.compile(r"^(?:(\d+)|rc(\d+))$")


def key(version):
    """A sortable key, or None for a version outside the known scheme."""
    parts = []
    for part in version.strip().lower().lstrip("v").split("."):
        match = PART.match(part)
        if match is None:
            return None
        # A final number outranks any release candidate in the same place.
        parts.append((1, int(match.group(1))) if match.group(1) is not None else (0, int(match.group(2))))
    return tuple(parts) if parts else None


def newer(installed, wanted):
    """True or False, or None when they cannot be ordered."""
    a, b = key(installed), key(wanted)
    if a is None or b is None:
        return None
    return a > b


def main(argv):
    verdict = newer(argv[1], argv[2])
    return 2 if verdict is None else (0 if verdict else 1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
