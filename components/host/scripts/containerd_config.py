"""containerd's config.toml edited as text, so comments, order and formatting of everything else stay as written.

Commands (OUT receives the edited FILE; a failed write names it and why):
`add|remove VERSION FILE OUT MAKE_DEFAULT SYSTEMD_CGROUP BINARY RECORDED` adds or removes the ascend runtime
(SYSTEMD_CGROUP empty: runc sets none, so neither does ascend; RECORDED: the user's own default runtime, given back
when ascend stops being the default); `import|unimport VERSION FILE OUT ENTRY` adds ENTRY to or drops it from the
top-level `imports` array (one line or many, with comments); `default-runtime VERSION FILE` prints the CRI
default runtime FILE names, if any.
"""
import json
import os
import re
import sys

import config_files

BEGIN, END = "# ascend-npu: ascend runtime (begin)", "# ascend-npu: ascend runtime (end)"
IMPORTS = re.compile(r"^[ \t]*imports[ \t]*=[ \t]*\[", re.M)
DEFAULT_KEY = re.compile(r"""(\s*default_runtime_name\s*=\s*)("[^"]*"|'[^']*')(.*)$""")


def cri(version):
    plugin = "io.containerd.cri.v1.runtime" if version == "3" else "io.containerd.grpc.v1.cri"
    return 'plugins."%s".containerd' % plugin


def is_header(line):
    return re.match(r"\s*\[", line) is not None


def table(line):
    match = re.match(r"\s*\[([^\[\]]+)\]\s*(#.*)?$", line)
    return re.sub(r"\s+", "", match.group(1)).replace("'", '"') if match else None


def section(lines, name):
    """(first, end) line indexes of table NAME, or None."""
    start = next((i for i, line in enumerate(lines) if table(line) == name), None)
    if start is None:
        return None
    return start, next((i for i in range(start + 1, len(lines)) if is_header(lines[i])), len(lines))


def default_runtime(lines, version):
    """(line index, name) of the CRI default_runtime_name, or (None, None)."""
    found = section(lines, cri(version))
    for i in range(found[0] + 1, found[1]) if found else ():
        match = DEFAULT_KEY.match(lines[i])
        if match:
            return i, match.group(2)[1:-1]
    return None, None


def set_default_runtime(lines, version, name, recorded=""):
    """Point default_runtime_name at NAME; with None, give ascend's place back (RECORDED, else containerd's runc)."""
    at, current = default_runtime(lines, version)
    if at is not None:
        wanted = name or ((recorded or "runc") if current == "ascend" else current)
        if wanted != current:
            match = DEFAULT_KEY.match(lines[at])
            lines[at] = '%s"%s"%s' % (match.group(1), wanted, match.group(3))
        return
    found = section(lines, cri(version))
    if name and found:
        lines.insert(found[0] + 1, '  default_runtime_name = "%s"' % name)
    elif name:
        lines.extend(["", "[%s]" % cri(version), '  default_runtime_name = "%s"' % name])


def array_items(text, start):
    """The string items of the TOML array opening at text[start] ('['): [(value, begin, end)], and its ']' index."""
    items, i = [], start + 1
    while i < len(text):
        char = text[i]
        if char == "#":
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
        elif char in "\"'":
            end = i + 1
            while end < len(text) and text[end] != char:
                end += 2 if char == '"' and text[end] == "\\" else 1
            if end >= len(text):
                raise ValueError("unterminated string in imports")
            raw = text[i:end + 1]
            items.append((json.loads(raw) if char == '"' else raw[1:-1], i, end + 1))
            i = end
        elif char == "]":
            return items, i
        i += 1
    raise ValueError("imports array is not closed")


def edit_imports(text, entry, add):
    """TEXT with ENTRY added to (or dropped from) its top-level imports, everything else as written."""
    first_table = next((m.start() for m in re.finditer(r"^[ \t]*\[", text, re.M)), len(text))
    match = IMPORTS.search(text, 0, first_table)
    if match is None:
        if not add:
            return text
        lines = text.split("\n")
        at = next((i + 1 for i, line in enumerate(lines) if re.match(r"\s*version\s*=", line)), 0)
        return "\n".join(lines[:at] + ['imports = ["%s"]' % entry] + lines[at:])
    items, close = array_items(text, match.end() - 1)
    values = [value for value, _, _ in items]
    if add and entry not in values:
        if not items:
            return text[:match.end()] + '"%s"' % entry + text[match.end():]
        last_end = items[-1][2]
        return text[:last_end] + ', "%s"' % entry + text[last_end:]
    if add or entry not in values:
        return text
    if values == [entry] and not text[match.end():close].replace('"%s"' % entry, "").strip():
        line_end = text.find("\n", close)
        return text[:match.start()] + text[(len(text) if line_end < 0 else line_end + 1):]
    index = values.index(entry)
    _, begin, end = items[index]
    after = re.match(r"[ \t]*,[ \t]*", text[end:])
    if index > 0:
        before = re.search(r",[ \t]*$", text[:begin])
        return text[:before.start() if before else begin] + text[end:]
    return text[:begin] + text[end + (after.end() if after else 0):]


def add_runtime(lines, version, make_default, systemd, binary, recorded=""):
    if section(lines, cri(version) + ".runtimes.ascend") is None:
        options = ['  BinaryName = "%s"' % binary] + (["  SystemdCgroup = %s" % systemd] if systemd else [])
        lines += ["", BEGIN, "[%s.runtimes.ascend]" % cri(version), '  runtime_type = "io.containerd.runc.v2"',
                  "[%s.runtimes.ascend.options]" % cri(version)] + options + [END]
    set_default_runtime(lines, version, "ascend" if make_default == "true" else None, recorded)


def remove_runtime(lines, version, recorded):
    if BEGIN in lines and END in lines:
        start = lines.index(BEGIN)
        start -= 1 if start and not lines[start - 1].strip() else 0  # the blank line add_runtime put before it
        del lines[start:lines.index(END) + 1]
    set_default_runtime(lines, version, None, recorded)


def read_lines(path):
    """PATH's lines, read as UTF-8 as TOML is (Python 3.6 would take the locale's ASCII over a bare SSH session)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def edited(mode, version, lines, args):
    """LINES after MODE; ValueError on a file the edit cannot read."""
    if mode in ("add", "import") and not any(line.strip() and not line.strip().startswith("#") for line in lines):
        lines = ["version = %s" % version]
    if mode == "add":
        add_runtime(lines, version, *args)
    elif mode == "remove":
        remove_runtime(lines, version, args[3] if len(args) > 3 else "")
    else:
        text = edit_imports("\n".join(lines), args[0], mode == "import")
        lines = text.split("\n") if text else []
        if lines and lines[-1] == "":
            lines.pop()
    return lines


def main(argv):
    mode, version, path = argv[:3]
    lines = read_lines(path)
    if mode == "default-runtime":
        print(default_runtime(lines, version)[1] or "")
        return 0
    out = argv[3]
    try:
        lines = edited(mode, version, lines, argv[4:])
    except ValueError as err:
        print("%s: %s" % (config_files.shown(path), err), file=sys.stderr)
        return 3
    text = "\n".join(lines) + ("\n" if lines else "")
    try:
        fd = os.open(out, os.O_WRONLY | os.O_TRUNC | os.O_CREAT, 0o600)
        try:
            config_files.write_all(fd, text.encode())
        finally:
            os.close(fd)
    except OSError as err:
        print(config_files.why(err, out), file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
