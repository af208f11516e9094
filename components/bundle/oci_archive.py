"""Proof that an OCI archive (`skopeo copy --all ... oci-archive:FILE:TAG`) holds one image, every blob intact."""
from __future__ import annotations

import hashlib
import json
import tarfile
from typing import IO, Optional

REF_NAME = "org.opencontainers.image.ref.name"  # OCI image-spec annotations.md: the tag skopeo writes
INDEX_TYPES = ("application/vnd.oci.image.index.v1+json",
               "application/vnd.docker.distribution.manifest.list.v2+json")
MANIFEST_TYPES = ("application/vnd.oci.image.manifest.v1+json",
                  "application/vnd.docker.distribution.manifest.v2+json")
CHUNK = 1 << 20


def streamed_sha256(handle: IO[bytes]) -> tuple[str, int]:
    """The SHA-256 (hex) and length of what HANDLE yields, read in chunks: installers and layers are gigabytes."""
    sha, length = hashlib.sha256(), 0
    while chunk := handle.read(CHUNK):
        sha.update(chunk)
        length += len(chunk)
    return sha.hexdigest(), length


class ArchiveProblem(Exception):
    """The archive does not hold the image, or a blob of it is missing or not what its digest says."""


def _blob_name(digest: str) -> str:
    algorithm, _, hexdigest = digest.partition(":")
    if algorithm != "sha256" or len(hexdigest) != 64:
        raise ArchiveProblem(f"a descriptor names {digest!r}, not a sha256 digest")
    return f"blobs/sha256/{hexdigest}"


class OciArchive:
    """An OCI image layout in a tar file, read member by member."""

    def __init__(self, tar: tarfile.TarFile):
        self.tar = tar
        self.members = {m.name.removeprefix("./"): m for m in tar.getmembers() if m.isfile()}

    def _open(self, name: str) -> IO[bytes]:
        member = self.members.get(name)
        handle = self.tar.extractfile(member) if member is not None else None
        if handle is None:
            raise ArchiveProblem(f"no {name} in the archive")
        return handle

    def blob(self, digest: str, size: Optional[int]) -> bytes:
        """A small blob's bytes (index, manifest), checked against its digest and size."""
        data = self._open(_blob_name(digest)).read()
        self._compare(digest, size, hashlib.sha256(data).hexdigest(), len(data))
        return data

    def verify_blob(self, digest: str, size: Optional[int]) -> None:
        """A layer or config blob, hashed as it streams."""
        self._compare(digest, size, *streamed_sha256(self._open(_blob_name(digest))))

    @staticmethod
    def _compare(digest: str, size: Optional[int], found: str, length: int) -> None:
        if f"sha256:{found}" != digest:
            raise ArchiveProblem(f"blob {digest} is damaged: its content hashes to sha256:{found}")
        if size is not None and size != length:
            raise ArchiveProblem(f"blob {digest} is {length} bytes, its descriptor says {size}")

    def index(self) -> dict:
        """The layout's index.json."""
        if "oci-layout" not in self.members:
            raise ArchiveProblem("not an OCI archive (no oci-layout); write it with "
                                 "`skopeo copy --all docker://SOURCE oci-archive:FILE:TAG`")
        return json.load(self._open("index.json"))

    def walk(self, descriptor: dict) -> int:
        """Every blob under DESCRIPTOR (index, manifests, configs, layers) present and intact; how many."""
        media = descriptor.get("mediaType", "")
        if media not in INDEX_TYPES + MANIFEST_TYPES:
            self.verify_blob(descriptor["digest"], descriptor.get("size"))
            return 1
        document = json.loads(self.blob(descriptor["digest"], descriptor.get("size")))
        children = document.get("manifests", []) if media in INDEX_TYPES else \
            [document["config"], *document.get("layers", [])]
        return 1 + sum(self.walk(child) for child in children)


def select(index: dict, tag: Optional[str], digest: Optional[str]) -> dict:
    """The index entry of the image: the one whose ref name is TAG, else the one of DIGEST."""
    entries = index.get("manifests", [])
    chosen = [e for e in entries if tag and e.get("annotations", {}).get(REF_NAME) == tag] or \
             [e for e in entries if digest and e.get("digest") == digest]
    if not chosen:
        held = ", ".join(sorted(e.get("annotations", {}).get(REF_NAME) or e.get("digest", "?") for e in entries))
        wanted = f"tag {tag}" if tag else f"digest {digest}"
        raise ArchiveProblem(f"holds no image of {wanted} (it holds: {held or 'nothing'})")
    return chosen[0]


def verify_archive(path: str, tag: Optional[str], digest: Optional[str]) -> str:
    """The digest of the image the archive holds for TAG (or DIGEST), every blob checked; ArchiveProblem if not."""
    try:
        with tarfile.open(path) as tar:
            archive = OciArchive(tar)
            entry = select(archive.index(), tag, digest)
            if digest and entry["digest"] != digest:
                raise ArchiveProblem(f"holds {entry['digest']} as {tag}, but the stack pins {digest}")
            archive.walk(entry)
            return entry["digest"]
    except (tarfile.TarError, OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ArchiveProblem(f"not a readable OCI archive ({type(exc).__name__}: {exc})") from exc
