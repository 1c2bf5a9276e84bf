#!/usr/bin/env python3
"""Checks that the documents name only files and flags that exist.

  scripts/check-docs.py [--root DIR] [--bin DIR]... [--verbose]

Documents: README.md, docs/*.md and every README.md in a folder of the tree (not under build*/,
nor loadtest/results/: a result file records the command as it was run that day).

- A path is a word that starts with a top-level folder of the tree (`server/worker.cc`,
  `deploy/`), or, inside backticks or a code block, a file name with an extension
  (`worker.{h,cc}`, `uring_driver.*`). It must exist: relative to the root or, for a name
  without a folder, to the document's own folder or as a file name anywhere in the tree.
  Braces expand, `*` globs; `<placeholder>` and what follows it are left out.
- A flag is a `--name` anywhere in a document. It must be one of ours: in the --help output of
  onepassd, onepass-load or onepass-reference when those binaries are found (--bin, else the
  build folders), else in their flag definitions (ABSL_FLAG); or an option a script of the
  tree parses (`--name)` in a shell `case`, argparse's add_argument). Flags of other
  programs (cmake, curl, perf, ...) are listed below, with the program they belong to.

- A section is a document followed by a quoted heading (`docs/design.md "Limits"`): that
  document must have a heading that begins with the quoted words. Sections are also checked
  in the code's comments and help texts (server/, handlers/, common/, loadtest/, scripts/,
  deploy/), which point readers into the documents the same way.

Prints one line per stale name (document:line: what) and exits 1 if there is any.
"""

import argparse
import glob
import itertools
import os
import re
import subprocess
import sys

# Options of programs that are not ours and that the documents show in commands.
EXTERNAL_FLAGS = {
    # cmake, ctest
    "preset", "build", "target", "test-dir", "output-on-failure", "timeout", "label-regex",
    # Abseil's own --help variants; systemd, chrt, taskset, perf, git, apt, bats, nft
    "helpfull", "kill-whom", "now", "no-children", "sort", "tap", "no-install-recommends",
    "call-graph",
    "dry-run", "uninstall", "supervised", "disable-syslog", "version", "value",
    # irqbalance (IRQBALANCE_ARGS written by deploy/onepass-rss)
    "banirq",
    # curl, kdig/dig, openssl, nsd, whois
    "data-binary", "silent", "show-error", "fail", "header", "output", "max-time",
}

TOP_FOLDERS = ("server", "handlers", "common", "loadtest", "deploy", "tests", "scripts",
               "docs", "cmake", ".ci")
FLAG_RE = re.compile(r"(?<![\w-])--([a-z][a-z0-9_-]*[a-z0-9])")
ROOTED_RE = re.compile(r"(?<![\w/.~$-])((?:%s)/[\w./{},*@+-]*)" %
                       "|".join(re.escape(f) for f in TOP_FOLDERS))
FILE_RE = re.compile(r"^[\w.{},*@+-]+\.(?:cc|h|sh|md|py|in|conf|service|bats|bash|txt|zone|"
                     r"flags|json|cmake|der|db|signed|\*|\{[\w,]+\})$")
TICKS_RE = re.compile(r"`([^`]+)`")
SECTION_RE = re.compile(r"([\w./-]+\.md)`? \"([^\"]+)\"")
CODE_FOLDERS = ("server/", "handlers/", "common/", "loadtest/", "scripts/", "deploy/")
BINARIES = ("server/onepassd", "loadtest/onepass-load", "loadtest/onepass-reference")


def documents(root):
    docs = []
    for base, dirs, files in os.walk(root):
        rel = os.path.relpath(base, root)
        dirs[:] = [d for d in dirs if not d.startswith(("build", ".git")) and
                   os.path.join(rel, d) not in ("./loadtest/results", "loadtest/results") and
                   d != "corpus"]
        for name in files:
            path = os.path.normpath(os.path.join(rel, name))
            if name == "README.md" or (rel == "docs" and name.endswith(".md")):
                docs.append(path)
    return sorted(docs)


def tree_files(root):
    names, paths = set(), []
    for base, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(("build", ".git"))]
        for name in files:
            names.add(name)
            paths.append(os.path.relpath(os.path.join(base, name), root))
    return names, paths


def expand_braces(word):
    match = re.search(r"\{([^{}]*)\}", word)
    if not match:
        return [word]
    head, tail = word[:match.start()], word[match.end():]
    return list(itertools.chain.from_iterable(
        expand_braces(head + part + tail) for part in match.group(1).split(",")))


def path_exists(root, doc_dir, word, names):
    for candidate in expand_braces(word):
        bases = [root] if "/" in candidate.rstrip("/") else [root, os.path.join(root, doc_dir)]
        found = any(glob.glob(os.path.join(base, candidate)) for base in bases)
        if not found and "/" not in candidate.rstrip("/"):
            found = any(re.fullmatch(re.escape(candidate).replace(r"\*", ".*"), n) for n in names)
        if not found:
            return False
    return True


def clean(word):
    word = word.split("<", 1)[0].split("DATE-", 1)[0]
    word = re.sub(r":\d+$", "", word)
    return word.rstrip(".,;:)'\"")


def stale_paths(root, doc, lines, names):
    doc_dir = os.path.dirname(doc)
    for number, line in enumerate(lines, 1):
        # A file name without a folder counts only on its own in backticks (`worker.cc`); in a
        # command (`--zone a.zone`, a code block) it is usually the reader's own file.
        alone = [s.strip() for s in TICKS_RE.findall(line) if len(s.split()) == 1]
        words = {clean(w) for w in ROOTED_RE.findall(line)}
        words |= {clean(w) for w in alone if FILE_RE.match(clean(w)) and "/" not in w}
        for word in sorted(w for w in words if w):
            if not path_exists(root, doc_dir, word, names):
                yield number, "no such file: %s" % word


def headings(path):
    with open(path, encoding="utf-8") as f:
        return [re.sub(r"^#+\s*", "", l).replace("`", "").strip() for l in f if l.startswith("#")]


def stale_sections(root, doc, lines):
    for number, line in enumerate(lines, 1):
        for target, title in SECTION_RE.findall(line.replace("`", "").replace('\\"', '"')):
            candidates = [os.path.join(root, target), os.path.join(root, os.path.dirname(doc), target)]
            found = [c for c in candidates if os.path.isfile(c)]
            if not found:
                continue  # a missing document is reported as a missing file
            if not any(h.startswith(title.replace("`", "")) for h in headings(found[0])):
                yield number, 'no such section: %s "%s"' % (target, title)


def help_flags(binaries):
    flags = set()
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    for binary in binaries:
        out = subprocess.run([binary, "--help"], capture_output=True, text=True, env=env,
                             timeout=30, check=False)
        flags |= {f.replace("_", "-") for f in FLAG_RE.findall(out.stdout + out.stderr)}
    return flags


def source_flags(root, paths, use_definitions):
    flags = set()
    for path in paths:
        full = os.path.join(root, path)
        text = ""
        if path.endswith((".cc", ".sh", ".py", ".bash")) or os.access(full, os.X_OK):
            try:
                with open(full, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue
        if use_definitions and path.endswith(".cc") and not path.startswith("tests/"):
            flags |= {f.replace("_", "-") for f in
                      re.findall(r"ABSL_FLAG\(\s*[\w:<>, ]+?,\s*(\w+)\s*,", text)}
        # Shell case labels ('--name)' or '--name|-n)') and argparse options.
        flags |= set(re.findall(r"^\s*(?:[\w-]+\|)*--([a-z][\w-]*)(?:\|[\w-]+)*\)", text, re.M))
        flags |= set(re.findall(r"add_argument\(\s*['\"]--([\w-]+)", text))
        # Flags a program takes apart from its flag library (onepassd's --flagfile).
        if path.endswith(".cc") and not path.startswith("tests/"):
            flags |= set(re.findall(r"(?:ConsumePrefix\(&\w+,|==)\s*\"--([a-z][\w-]*)=?\"", text))
    return flags


def find_binaries(root, bin_dirs):
    dirs = bin_dirs or sorted(glob.glob(os.path.join(root, "build", "*")))
    for directory in dirs:
        found = [os.path.join(directory, b) for b in BINARIES]
        if all(os.access(b, os.X_OK) for b in found):
            return found
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--bin", action="append", default=[],
                        help="a build folder holding server/onepassd and loadtest/onepass-*")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    names, paths = tree_files(root)
    binaries = find_binaries(root, args.bin)
    if args.bin and not binaries:
        print("check-docs: no onepassd, onepass-load and onepass-reference under %s" %
              " ".join(args.bin), file=sys.stderr)
        return 2
    known = source_flags(root, paths, use_definitions=not binaries)
    known |= help_flags(binaries) | EXTERNAL_FLAGS
    if args.verbose:
        print("check-docs: flags from %s" % (" ".join(binaries) or "the flag definitions"))
    problems = 0
    for doc in documents(root):
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            lines = f.read().split("\n")
        for number, what in itertools.chain(stale_paths(root, doc, lines, names),
                                            stale_sections(root, doc, lines)):
            print("%s:%d: %s" % (doc, number, what))
            problems += 1
        for number, line in enumerate(lines, 1):
            for flag in FLAG_RE.findall(line):
                if flag.replace("_", "-") not in known:
                    print("%s:%d: no such flag: --%s" % (doc, number, flag))
                    problems += 1
    for path in paths:
        if not path.startswith(CODE_FOLDERS) or path.endswith(".md") or "/results/" in path:
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                lines = f.read().split("\n")
        except (UnicodeDecodeError, OSError):
            continue
        for number, what in stale_sections(root, path, lines):
            print("%s:%d: %s" % (path, number, what))
            problems += 1
    if problems:
        print("check-docs: %d stale name(s) in the documents" % problems)
        return 1
    print("check-docs: every path, flag and section the documents name exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
