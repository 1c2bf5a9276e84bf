#!/usr/bin/env python3
"""Checks that the documents name only files and flags that exist.

  scripts/check-docs.py [--root DIR] [--bin DIR]... [--verbose]

Documents: every *.md at the root (README.md, ...), docs/*.md and every README.md in a folder
of the tree (not under build*/, nor loadtest/results/: a result file records the command as it
was run that day).

A name may be split over two lines: a paragraph of a document is read as one text (a table row,
a heading and a code block's line on their own), and so are the comment lines and the string
literals of code that continue one another. A backticked path broken after a "/", "-", "_" or
"." is one path.

- A path is a word that starts with a top-level folder of the tree (`server/worker.cc`,
  `deploy/`), a root-level file name (README.md, CMakeLists.txt, CMakePresets.json: a
  capitalized name with .md, .txt or .json), or, inside backticks, a file name with an
  extension (`worker.{h,cc}`, `uring_driver.*`) or a dot file (`.clang-format`, `.gitignore`;
  not `.key`, an extension). It must exist: relative to the root or, for a name without a
  folder, to the document's own folder or as a file name anywhere in the tree. Braces expand,
  `*` globs; `<placeholder>` and what follows it are left out.
- A flag is a `--name` anywhere in a document. It must be one of ours: in the --help output of
  onepassd, onepass-load or onepass-reference when those binaries are found (--bin, else the
  build folders), else in their flag definitions (ABSL_FLAG); or an option a script of the
  tree parses (`--name)` in a shell `case`, argparse's add_argument). Flags of other
  programs (cmake, curl, perf, ...) are listed below, with the program they belong to.

- A section is a document followed by a quoted heading (`docs/design.md "Limits"`, also
  `docs/design.md § "Limits"`): that document must have a heading (outside code blocks) that
  begins with the quoted words. After a §, the words up to the next punctuation without
  quotes (`docs/operations.md § Limits`) must begin a heading or begin with one. Sections are
  also checked in the code's comments and help texts (the root's files, server/, handlers/,
  common/, loadtest/, scripts/, deploy/, cmake/, .ci/, tests/ but for tests/scripts/, whose
  documents are fixtures), which point readers into the documents the same way.

Prints one line per stale name (document:line: what) and exits 1 if there is any.
"""

import argparse
import bisect
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
# A file at the root: README.md, CMakeLists.txt, CMakePresets.json, a CHANGELOG.md to come.
ROOT_FILE_RE = re.compile(r"(?<![\w/.~$<-])([A-Z][A-Za-z_-]*\.(?:md|txt|json))(?![\w/-])")
FILE_RE = re.compile(r"^(?:[\w.{},*@+-]+\.(?:cc|h|sh|md|py|in|conf|service|bats|bash|txt|zone|"
                     r"flags|json|cmake|der|db|signed|\*|\{[\w,]+\})|\.(?:[a-z]\w*-[\w-]+|git\w+))$")
TICKS_RE = re.compile(r"`([^`]+)`")
# A document, then a quoted heading (one line break at most inside it), or a § and the words
# of a heading up to the next punctuation. Backticks are taken out before, \" is ".
SECTION_RE = re.compile(r"(?<![\w/.-])([\w./-]+\.md)(?:\s+§)?\s+\"([^\"\n]+(?:\n[^\"\n]+)?)\"")
SECTION_SIGN_RE = re.compile(r"(?<![\w/.-])([\w./-]+\.md)\s*§\s*([A-Za-z][^\"\n.,;:()]*"
                             r"(?:\n[^\"\n.,;:()]*)?)")
# Where the code's comments and help texts are read for sections: the root's own files too.
CODE_FOLDERS = ("server/", "handlers/", "common/", "loadtest/", "scripts/", "deploy/", "cmake/",
                ".ci/", "tests/")
CODE_SKIP = ("tests/scripts/",)  # the checker's own tests: their documents are fixtures
# A comment's leading mark, stripped so that the comment's lines continue one another.
COMMENT_RE = re.compile(r"^\s*(?://+!?|#+|/\*+|\*+(?!/)|--)?\s?")
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
            if name == "README.md" or (rel in (".", "docs") and name.endswith(".md")):
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


class Text:
    """Lines read as one text: text[i] is on line line_of(i) of the file."""

    def __init__(self):
        self.text, self.starts, self.numbers = "", [], []

    def add(self, number, line, sep):
        self.text += sep
        self.starts.append(len(self.text))
        self.numbers.append(number)
        self.text += line

    def line_of(self, offset):
        return self.numbers[max(0, bisect.bisect_right(self.starts, offset) - 1)]


def markdown_blocks(lines):
    """A document's paragraphs, each one Text. A heading, a table row and a line of a code
    block stand alone; inside a paragraph, a line break within backticks right after a path's
    "/", "-", "_" or "." joins the two halves of the path."""
    blocks, current, fenced = [], None, False
    for number, line in enumerate(lines, 1):
        fence = line.lstrip().startswith("```")
        alone = fence or fenced or line.lstrip().startswith(("#", "|"))
        if fence:
            fenced = not fenced
        if alone or not line.strip():
            current = None
            if line.strip():
                blocks.append(Text())
                blocks[-1].add(number, line, "")
            continue
        if current is None:
            current = Text()
            blocks.append(current)
            current.add(number, line, "")
            continue
        inside_ticks = current.text.count("`") % 2 == 1
        last = re.split(r"[\s`]", current.text.rstrip())[-1]
        if inside_ticks and "/" in last and last.endswith(("/", "-", "_", ".")):
            current.text = current.text.rstrip()
            current.add(number, line.lstrip(), "")
        else:
            current.add(number, line, "\n")
    return blocks


def code_text(lines):
    """A source file as one Text, each line without its comment mark or its indent, a string
    literal that the next line continues ("... " / "...") joined to it."""
    text = Text()
    for number, line in enumerate(lines, 1):
        stripped = COMMENT_RE.sub("", line, count=1)
        if text.text.endswith('"') and stripped.startswith('"'):
            text.text = text.text[:-1]
            text.add(number, stripped[1:], "")
        else:
            text.add(number, stripped, "\n")
    return text


def stale_paths(root, doc, lines, names):
    doc_dir = os.path.dirname(doc)
    for block in markdown_blocks(lines):
        words = {}
        # A file name without a folder counts only on its own in backticks (`worker.cc`); in a
        # command (`--zone a.zone`, a code block) it is usually the reader's own file.
        for match in TICKS_RE.finditer(block.text):
            span = match.group(1).strip()
            if len(span.split()) == 1 and "/" not in span and FILE_RE.match(clean(span)):
                words.setdefault(clean(span), block.line_of(match.start()))
        for regex in (ROOTED_RE, ROOT_FILE_RE):
            for match in regex.finditer(block.text):
                words.setdefault(clean(match.group(1)), block.line_of(match.start()))
        for word, number in sorted(words.items(), key=lambda w: (w[1], w[0])):
            if word and not path_exists(root, doc_dir, word, names):
                yield number, "no such file: %s" % word


def headings(path):
    """The headings of a document, without their marks and backticks; a code block's comment
    lines (`# DNS from zone files`) are none."""
    found, fenced = [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif line.startswith("#") and not fenced:
                found.append(re.sub(r"^#+\s*", "", line).replace("`", "").strip())
    return found


def begins_with(text, head):
    """Whether text begins with the words of head ("Limits, and why" with "Limits", not
    "Limitless")."""
    return text.startswith(head) and not text[len(head):len(head) + 1].isalnum()


def stale_sections(root, doc, texts):
    for block in texts:
        text = block.text.replace("`", "").replace('\\"', '"')
        for quoted, regex in ((True, SECTION_RE), (False, SECTION_SIGN_RE)):
            for match in regex.finditer(text):
                target = match.group(1)
                title = " ".join(match.group(2).split())
                candidates = [os.path.join(root, target),
                              os.path.join(root, os.path.dirname(doc), target)]
                found = [c for c in candidates if os.path.isfile(c)]
                if not found or not title:
                    continue  # a missing document is reported as a missing file
                titles = headings(found[0])
                if quoted:
                    ok = any(h.startswith(title) for h in titles)
                else:
                    ok = any(begins_with(h, title) or begins_with(title, h) for h in titles)
                if not ok:
                    number = block.line_of(original_offset(block.text, match.start()))
                    yield number, 'no such section: %s "%s"' % (target, title)


def original_offset(text, offset):
    """The offset in text of the character at offset once backticks and a \\ before a quote
    are taken out."""
    seen = 0
    for i, char in enumerate(text):
        if char == "`" or (char == "\\" and text[i + 1:i + 2] == '"'):
            continue
        if seen == offset:
            return i
        seen += 1
    return len(text)


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
                                            stale_sections(root, doc, markdown_blocks(lines))):
            print("%s:%d: %s" % (doc, number, what))
            problems += 1
        for number, line in enumerate(lines, 1):
            for flag in FLAG_RE.findall(line):
                if flag.replace("_", "-") not in known:
                    print("%s:%d: no such flag: --%s" % (doc, number, flag))
                    problems += 1
    for path in paths:
        at_root = os.sep not in path
        if (not (at_root or path.startswith(CODE_FOLDERS)) or path.startswith(CODE_SKIP) or
                path.endswith(".md") or "/results/" in path or "/corpus/" in path):
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                lines = f.read().split("\n")
        except (UnicodeDecodeError, OSError):
            continue
        for number, what in stale_sections(root, path, [code_text(lines)]):
            print("%s:%d: %s" % (path, number, what))
            problems += 1
    if problems:
        print("check-docs: %d stale name(s) in the documents" % problems)
        return 1
    print("check-docs: every path, flag and section the documents name exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
