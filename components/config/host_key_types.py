"""Host key pins the command provider can verify against a current OpenSSH: ed25519 and ecdsa, never RSA."""
from __future__ import annotations

from typing import Any, Optional

from components.config.problems import Problem

# pulumi-command v1.2.1 (provider/pkg/provider/remote/connection.go:88-98) parses the pin with
# ssh.ParseAuthorizedKey, which reads the key type from the blob and ignores the label (golang.org/x/crypto v0.48.0
# ssh/keys.go:224-231), and offers only publicKey.Type() as host key algorithm: `ssh-rsa` for any RSA key
# (keys.go:457-459, handshake.go:165-169,546), the SHA-1 signature OpenSSH 8.8 and later no longer accept.
RSA_LABELS = ("ssh-rsa", "rsa-sha2-256", "rsa-sha2-512")
WORKING = "ssh-ed25519 (or ecdsa-sha2-nistp256, -nistp384, -nistp521)"


def keyscan_line(host: str, port: Optional[int]) -> str:
    """The ssh-keyscan command that prints the ed25519 key of HOST on PORT."""
    return f"ssh-keyscan -t ed25519 -p {port if port is not None else '<ssh.port>'} {host}"


def rsa_pin_problem(field: str, pin: Optional[str], host: str, port: Optional[int]) -> Optional[Problem]:
    """A problem naming FIELD when PIN is an RSA key, with the command that prints a key that works."""
    label = (pin or "").split(" ", 1)[0]
    if label not in RSA_LABELS:
        return None
    return Problem(field, f"an RSA host key ({label}): pulumi-command v1.2.1 checks an RSA host key only with the "
                          "SHA-1 ssh-rsa signature, which OpenSSH 8.8 and later refuse (the step fails with \"no "
                          f"common algorithm for host key\"); pin the host's {WORKING} key instead: run "
                          f"`{keyscan_line(host, port)}` and paste its line")


def check_host_key_types(parsed: dict[str, Any]) -> list[Problem]:
    """Every node's and the bastion's pin is a key type v1.2.1 can verify against OpenSSH 8.8 and later."""
    ssh = parsed.get("ssh")
    port = ssh.port if ssh is not None else None
    found = [rsa_pin_problem(f"nodes[{i}].hostKey", node.host_key, node.address, port)
             for i, node in enumerate(parsed.get("nodes", [])) if node is not None]
    bastion = ssh.bastion if ssh is not None else None
    if bastion is not None:
        found.append(rsa_pin_problem("ssh.bastion.hostKey", bastion.host_key, bastion.host, bastion.port))
    return [problem for problem in found if problem is not None]
