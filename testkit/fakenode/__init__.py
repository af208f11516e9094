"""A stand-in Ascend node reachable over real SSH: sshd on loopback, a sandbox root and stand-in tools."""
