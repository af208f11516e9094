# shellcheck shell=bash
# Driver and firmware checked against each other from their own records: firmware_compat.py.

# The reason the installed driver and firmware do not go together, in COMPAT_PROBLEM; returns 1 then.
check_firmware_compatibility() {
  # shellcheck disable=SC2034 # read by the step that calls this
  COMPAT_PROBLEM=$(py firmware_compat "$ASCEND_HOME/driver/version.info" "$ASCEND_HOME/firmware/version.info")
}
