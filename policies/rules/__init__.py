"""Every rule of the pack, one module each."""
from rules import image_pinning

ALL_POLICIES = [image_pinning.POLICY]
