# shellcheck shell=bash
# Driver and firmware checked against each other from their own records, the way Huawei's DCMI does
# (dcmi_get_device_compatibility): the firmware is compatible when it lies in one of the driver's
# `compatible_version_fw` ranges, or the driver in one of the firmware's `compatible_version_drv` ranges; a version
# is cut to the longer bound's length and compared as a string, so "24.1." as an upper bound takes every 24.1.x.
# Firmware below "6.4." is never compatible. See components/releases/npu-driver.yaml.

# argv: driver version.info, firmware version.info. Prints why they do not go together and exits 1; prints nothing
# when they do, or when either record is missing or carries no range.
read -r -d '' COMPAT_CHECK <<'PY' || true
import re, sys


def record(path):
    try:
        with open(path) as f:
            return {k.strip().lower(): v.strip() for k, _, v in (line.partition("=") for line in f) if _}
    except OSError:
        return {}


def within(version, ranges):
    for low, high in re.findall(r"\[([^,\]]*),([^\]]*)\]", ranges or ""):
        cut = version[:max(len(low), len(high))]
        if low <= cut <= high:
            return True
    return False


driver, firmware = record(sys.argv[1]), record(sys.argv[2])
drv, fw = driver.get("version", ""), firmware.get("version", "")
fw_ranges, drv_ranges = driver.get("compatible_version_fw"), firmware.get("compatible_version_drv")
if not drv or not fw or not (fw_ranges or drv_ranges):
    sys.exit(0)
if fw >= "6.4." and (within(fw, fw_ranges) or within(drv, drv_ranges)):
    sys.exit(0)
print("driver %s takes firmware %s and firmware %s takes driver %s: the installed driver %s and firmware %s do not "
      "go together; install a firmware in the driver's range or a driver in the firmware's"
      % (drv, fw_ranges or "(none listed)", fw, drv_ranges or "(none listed)", drv, fw))
sys.exit(1)
PY

# The reason the installed driver and firmware do not go together, in COMPAT_PROBLEM; returns 1 then.
check_firmware_compatibility() {
  # shellcheck disable=SC2034 # read by the step that calls this
  COMPAT_PROBLEM=$(python3 -c "$COMPAT_CHECK" "$ASCEND_HOME/driver/version.info" "$ASCEND_HOME/firmware/version.info")
}
