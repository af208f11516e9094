"""The Node a host's kubelet registered as, read from its client certificate.

The kubelet asks for its client certificate with subject `CN=system:node:<node name>, O=system:nodes`
(kubernetes v1.36.3 pkg/kubelet/certificate/kubelet.go L233) and keeps it with its key in
`<cert-dir>/kubelet-client-current.pem` (client-go v0.36.3 util/certificate/certificate_store.go L36, L315;
cert-dir defaults to /var/lib/kubelet/pki, cmd/kubelet/app/options/options.go L140).

`main PEM_FILE` prints the node name and exits 0; prints nothing and exits 1 when the file holds no kubelet
client certificate. Python 3.6 and the standard library only: it runs on the node.
"""
import base64
import re
import sys

CERTIFICATE = re.compile(r"-----BEGIN CERTIFICATE-----(.+?)-----END CERTIFICATE-----", re.S)
COMMON_NAME = b"\x06\x03\x55\x04\x03"  # OID 2.5.4.3
TEXT_TAGS = (0x0C, 0x13, 0x14, 0x1E)  # UTF8String, PrintableString, TeletexString, BMPString
PREFIX = "system:node:"


def common_names(der):
    """Every commonName in a DER certificate, in order: the issuer's first, then the subject's."""
    names, at = [], der.find(COMMON_NAME)
    while at >= 0:
        tag_at = at + len(COMMON_NAME)
        if tag_at + 2 <= len(der) and der[tag_at] in TEXT_TAGS and der[tag_at + 1] < 0x80:
            raw = der[tag_at + 2:tag_at + 2 + der[tag_at + 1]]
            names.append(raw.decode("utf-16-be" if der[tag_at] == 0x1E else "utf-8", "replace"))
        at = der.find(COMMON_NAME, at + 1)
    return names


def node_name(text):
    """The node name of the first certificate in TEXT whose subject is a kubelet's, else None."""
    for body in CERTIFICATE.findall(text):
        try:
            der = base64.b64decode("".join(body.split()))
        except ValueError:
            continue
        names = common_names(der)
        if names and names[-1].startswith(PREFIX) and len(names[-1]) > len(PREFIX):
            return names[-1][len(PREFIX):]
    return None


def main(args):
    try:
        with open(args[0]) as f:
            name = node_name(f.read())
    except (OSError, UnicodeDecodeError):
        name = None
    if name is None:
        return 1
    print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
