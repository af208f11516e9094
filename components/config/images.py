"""Container image references, pinned by tag or digest."""
from __future__ import annotations

import re
from typing import Optional

from pydantic import Field, field_validator, model_validator

from components.config.base import PULL_POLICY, UNPINNED_WORDS, SpecModel, require_pinned
from components.config.redact import KEY_MATERIAL, preview
from components.config.registry import checked_registry

REPOSITORY = re.compile(r"^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$")
TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


class Image(SpecModel):
    """An image as `repository` plus a `tag`, a `digest` or both; never `latest`."""

    repository: str = Field(description="Registry and path, without tag or digest.")
    tag: Optional[str] = Field(None, description="Exact tag; `latest` is refused.")
    digest: Optional[str] = Field(None, description="`sha256:` digest; wins over the tag when both are set.")
    pull_policy: str = Field("IfNotPresent", pattern=PULL_POLICY,
                             description="Kubernetes imagePullPolicy.")
    registry: Optional[str] = Field(None, description="Registry (host[:port], or host[:port]/project) this image "
                                                      "alone is pulled from: replaces the registry of `repository`, "
                                                      "and wins over `images.registry`.")

    @classmethod
    def required_tag(cls) -> Optional[str]:
        """What to write as the tag when the image must have one; None when a digest alone pins it."""
        return None

    @classmethod
    def mapping_hint(cls, text: Optional[str]) -> str:
        """The mapping to write for an image written as one string (None: a string not to be shown)."""
        return mapping_for(text, cls.required_tag())

    @field_validator("repository")
    @classmethod
    def _repository(cls, value: str) -> str:
        if "@" in value:
            raise ValueError("a repository with '@' (a login or a digest); write the registry and path only: a "
                             "digest goes in 'digest', a registry login in an imagePullSecret, never in the stack")
        if REPOSITORY.match(value) is None:
            raise ValueError(f"{preview(value)} is not a repository; write it without tag or digest, "
                             "for example 'registry.example.com/ascend/npu-exporter'")
        return value

    @field_validator("registry")
    @classmethod
    def _registry(cls, value: Optional[str]) -> Optional[str]:
        return checked_registry(value)

    @field_validator("tag")
    @classmethod
    def _tag(cls, value: Optional[str]) -> Optional[str]:
        if value is None:
            return value
        if TAG.match(value) is None:
            raise ValueError(f"{preview(value)} is not an image tag; write a tag such as 'v6.0.0'")
        return require_pinned(value, "image tag", "v6.0.0 (or pin a digest)")

    @field_validator("digest")
    @classmethod
    def _digest(cls, value: Optional[str]) -> Optional[str]:
        if value is not None and DIGEST.match(value) is None:
            raise ValueError(f"{preview(value)} is not a digest; write 'sha256:' and 64 lowercase hex characters")
        return value

    @model_validator(mode="after")
    def _pinned(self) -> "Image":
        if self.tag is None and self.digest is None:
            raise ValueError("the image is not pinned; set 'tag' (not latest) or 'digest' (sha256:...)")
        return self

    @property
    def reference(self) -> str:
        """The full reference Kubernetes pulls: `repo:tag@digest`, `repo@digest` or `repo:tag`."""
        ref = self.repository
        if self.tag:
            ref += f":{self.tag}"
        if self.digest:
            ref += f"@{self.digest}"
        return ref


def split_reference(text: str) -> Optional[dict[str, Optional[str]]]:
    """`repo[:tag][@digest]` as its parts, or None when a part is not valid or the text looks like key material."""
    # The tag follows the last ':' after the last '/': a ':' before it is a registry's port.
    name, at, digest = text.strip().partition("@")
    tag = None
    if name.rfind(":") > name.rfind("/"):
        name, _, tag = name.rpartition(":")
    if REPOSITORY.match(name) is None or (tag is not None and TAG.match(tag) is None) \
            or (at and DIGEST.match(digest) is None) or KEY_MATERIAL.search(text):
        return None
    return {"repository": name, "tag": tag, "digest": digest or None}


def mapping_for(text: Optional[str], required_tag: Optional[str] = None) -> str:
    """The mapping an image written as `repo:tag` or `repo@sha256:...` stands for, in flow style."""
    tag_words = required_tag or "<exact tag>"
    parts = split_reference(text) if text is not None else None
    if parts is None:
        return f"{{repository: <registry and path>, tag: {tag_words}}}"
    if parts["tag"] is not None and parts["tag"].lower() in UNPINNED_WORDS:
        parts["tag"] = f"{tag_words} (not {parts['tag']}, which moves)"
    elif parts["tag"] is None and (required_tag or parts["digest"] is None):
        parts["tag"] = tag_words
    return "{" + ", ".join(f"{key}: {value}" for key, value in parts.items() if value is not None) + "}"
