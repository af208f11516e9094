"""Driver and firmware checked against each other from their own records, the way Huawei's DCMI does.

The firmware is compatible when it lies in one of the driver's `compatible_version_fw` ranges, or the driver in
one of the firmware's `compatible_version_drv` ranges (dcmi_get_device_compatibility); a version is cut to the
longer bound's length and compared as a string, so "24.1." as an upper bound takes every 24.1.x. Firmware below
"6.4." is never compatible. See components/releases/npu-driver.yaml.

`main DRIVER_VERSION_INFO FIRMWARE_VERSION_INFO` prints why the two do not go together and exits 1; it prints
nothing and exits 0 when they do, or when either record is missing or carries no range.
"""
import re
import sys

RANGE = re.compile(r"\[([^,\]]*),([^\]]*)\]")


def record(path):
    """The key=value lines of a version.info, keys lower-cased; empty when the file cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return {k.strip().lower(): v.strip() for k, sep, v in (line.partition("=") for line in f) if sep}
    except OSError:
        return {}


def within(version, ranges):
    """Whether VERSION, cut to each bound's length, lies in one of RANGES (`[lo,hi],[lo,hi]`)."""
    for low, high in RANGE.findall(ranges or ""):
        cut = version[:max(len(low), len(high))]
        if low <= cut <= high:
            return True
    return False


def problem(driver, firmware):
    """Why the records DRIVER and FIRMWARE do not go together, or None."""
    drv, fw = driver.get("version", ""), firmware.get("version", "")
    fw_ranges, drv_ranges = driver.get("compatible_version_fw"), firmware.get("compatible_version_drv")
    if not drv or not fw or not (fw_ranges or drv_ranges):
        return None
    if fw >= "6.4." and (within(fw, fw_ranges) or within(drv, drv_ranges)):
        return None
    return ("driver %s takes firmware %s and firmware %s takes driver %s: the installed driver %s and firmware %s "
            "do not go together; install a firmware in the driver's range or a driver in the firmware's"
            % (drv, fw_ranges or "(none listed)", fw, drv_ranges or "(none listed)", drv, fw))


def main(argv):
    found = problem(record(argv[0]), record(argv[1]))
    if found:
        print(found)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
