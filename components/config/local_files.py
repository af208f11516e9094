"""What the engine itself reads from this machine before anything runs: the upload directory and its files."""
from __future__ import annotations

from pathlib import Path

from components.config.packages import Source
from components.config.problems import Problem
from components.config.stack import StackSpec


def local_file_problems(spec: StackSpec, cwd: Path) -> list[Problem]:
    """With `packages.source: upload`, the directory must exist and hold every listed file: the engine hashes the
    directory when the program registers its upload, in preview too, and a missing one fails there with a
    traceback. The sums are left to the nodes, which check each file before running it."""
    packages = spec.packages
    if packages.source is not Source.UPLOAD or packages.directory is None:
        return []
    directory = (cwd / packages.directory).resolve()
    if not directory.is_dir():
        return [Problem("packages.directory", f"`{packages.directory}` is not a directory here ({directory}): "
                                              "put the .run files there, or set packages.directory to where they are")]
    return [Problem(f"packages.files[{i}].file", f"`{pkg.file}` is not in `{packages.directory}`: "
                                                 "copy it there (the sha256 in the stack must match it)")
            for i, pkg in enumerate(packages.files) if not (directory / pkg.file).is_file()]
