"""When a step dials its node again, and when it stops: one loop and one list of answers no wait can change."""
from __future__ import annotations

import errno
import resource
import time
from typing import Callable, Iterable, Iterator, Optional, TypeVar

Answer = TypeVar("Answer")
# What ssh says when the node's key is not the pinned one, or the stack's key is not authorized: dialing again
# cannot change it (OpenSSH V_9_2_P1: sshconnect2.c L106 and L567, sshconnect.c L1639, ssherr.c L97 for kex.c's
# "Unable to negotiate", and the server's auth.c L345).
FATAL = ("Host key verification failed", "REMOTE HOST IDENTIFICATION HAS CHANGED", "Permission denied",
         "no matching host key type", "Too many authentication failures")
# A step's dials: 10 (as pulumi-command v1.2.1's dialErrorLimit), 1, 2, 4, then 5 s apart.
DIAL_ATTEMPTS = 10


def fatal(said: str) -> bool:
    """Whether ssh's line says something a new dial cannot change."""
    return any(mark in said for mark in FATAL)


def backoff(attempts: Optional[int] = None, first: float = 1.0, most: float = 5.0) -> Iterator[float]:
    """The waits between ATTEMPTS dials (DIAL_ATTEMPTS): doubling from FIRST, at most MOST."""
    wait = first
    for _ in range((DIAL_ATTEMPTS if attempts is None else attempts) - 1):
        yield wait
        wait = min(most, wait * 2)


def paced(limit: float, pace: float, clock: Callable[[], float] = time.monotonic) -> Iterator[float]:
    """Waits of PACE seconds until LIMIT seconds have passed since the first was asked for."""
    start = clock()
    while (left := limit - (clock() - start)) > 0:
        yield min(pace, left)


def redial(attempt: Callable[[], Answer], settled: Callable[[Answer], bool], waits: Iterable[float],
           before_wait: Optional[Callable[[Answer, float], None]] = None,
           sleep: Callable[[float], None] = time.sleep) -> Answer:
    """ATTEMPT until SETTLED says its answer is the one to keep or WAITS run out (a wait between two tries, told to
    BEFORE_WAIT first); the last answer."""
    for wait in waits:
        answer = attempt()
        if settled(answer):
            return answer
        if before_wait is not None:
            before_wait(answer, wait)
        sleep(wait)
    return attempt()


def local_failure(error: OSError) -> str:
    """Why this machine could not start `ssh`, and what to do."""
    if error.errno in (errno.EMFILE, errno.ENFILE):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        return (f"this machine ran out of open files starting ssh ({error.strerror}; this process may open {soft}, "
                f"at most {hard}): raise the limit of the shell or CI job that runs pulumi (`ulimit -n`, "
                "LimitNOFILE= in a systemd unit) or lower `pulumi up --parallel`")
    return f"cannot run OpenSSH here ({error}); install openssh-client on the machine that runs pulumi"
