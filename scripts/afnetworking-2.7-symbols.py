#!/usr/bin/env python3
"""Lists every public symbol of AFNetworking 2.7.0, one per line, sorted.

Reads the public headers (AFNetworking/*.h and UIKit+AFNetworking/*.h) at the
2.7.0 tag of a git copy of AFNetworking and prints:

  AFClass, AFProtocol, UIImageView+AFNetworking   classes, protocols, categories
  -[AFClass selector:] / +[AFClass selector]       methods (protocol and category
                                                  methods with the protocol or
                                                  `Class(Category)` in front)
  AFClass.property                                properties
  AFEnum, AFEnumCase                              enums (typedef NS_ENUM) and cases
  AFSomeConstant, AFSomeFunction                  exported constants and C functions

Declarations marked NS_UNAVAILABLE are left out (2.7 could not call them
either). Declarations inside #if branches are all listed, whatever the platform.

Usage:
  scripts/afnetworking-2.7-symbols.py [GIT_DIR] > Tests/AFNetworkingTests/Migration/afnetworking-2.7-symbols.txt

GIT_DIR defaults to the first git directory under /work/.mirror/AFNetworking+AFNetworking.
The output is committed, so the tests never need the mirror.
"""

import os
import re
import subprocess
import sys

TAG = "2.7.0"
FOLDERS = ["AFNetworking", "UIKit+AFNetworking"]
DEFAULT_MIRROR = "/work/.mirror/AFNetworking+AFNetworking"

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"

# Macros that may follow a declaration and are not part of its name.
TRAILING_MACROS = {
    "NS_DESIGNATED_INITIALIZER", "DEPRECATED_ATTRIBUTE", "NS_UNAVAILABLE",
    "NS_REQUIRES_NIL_TERMINATION", "NS_SWIFT_NOTHROW", "NS_EXTENSION_UNAVAILABLE_IOS",
    "NS_EXTENSION_UNAVAILABLE", "NS_AVAILABLE_IOS", "NS_AVAILABLE", "NS_DEPRECATED",
    "NS_SWIFT_NAME", "__attribute__",
}


def find_git_dir(argument):
    if argument:
        return argument
    for root, dirs, _files in os.walk(DEFAULT_MIRROR):
        if "HEAD" in os.listdir(root) and "objects" in dirs:
            return root
        if ".git" in dirs:
            return os.path.join(root, ".git")
    sys.exit("no git directory found under %s; pass one" % DEFAULT_MIRROR)


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True,
                          capture_output=True, text=True).stdout


def headers(git_dir):
    names = git(git_dir, "ls-tree", "-r", "--name-only", TAG, *FOLDERS).split("\n")
    for name in sorted(n for n in names if n.endswith(".h")):
        yield name, git(git_dir, "show", "%s:%s" % (TAG, name))


def clean(text):
    """Comments and preprocessor lines out; every #if branch's text stays."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    lines = [l for l in text.split("\n") if not l.lstrip().startswith("#")]
    return "\n".join(lines)


def skip_parens(text, i):
    """text[i] is '('; returns the index just past the matching ')'."""
    depth = 0
    while i < len(text):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced parentheses in %r" % text)


def selector(declaration):
    """The selector of `- (type)part:(type)arg part:(type)arg …` (attributes ignored)."""
    text = declaration.strip()[1:].lstrip()
    i = skip_parens(text, text.index("(")) if text.startswith("(") else 0
    parts = []
    while True:
        m = re.compile(r"\s*(" + IDENT + r")").match(text, i)
        if not m or m.group(1) in TRAILING_MACROS:
            break
        name, i = m.group(1), m.end()
        colon = re.compile(r"\s*:").match(text, i)
        if not colon:
            if not parts:
                parts.append(name)
            break
        parts.append(name + ":")
        i = colon.end()
        space = re.compile(r"\s*").match(text, i).end()
        if text.startswith("(", space):
            i = skip_parens(text, space)
        arg = re.compile(r"\s*" + IDENT).match(text, i)
        if arg:
            i = arg.end()
    return "".join(parts)


def property_name(declaration):
    text = re.sub(r"\(.*?\)", " ", declaration[len("@property"):], count=1)
    names = [n for n in re.findall(IDENT, text) if n not in TRAILING_MACROS]
    return names[-1]


def statements(body):
    """Splits an @interface/@protocol body into declarations ending in ';'."""
    out, start, depth = [], 0, 0
    for i, c in enumerate(body):
        if c in "({":
            depth += 1
        elif c in ")}":
            depth -= 1
        elif c == ";" and depth == 0:
            out.append(body[start:i].strip())
            start = i + 1
    return [s for s in out if s]


def container_symbols(kind, header_line, body, symbols):
    if kind == "@interface":
        m = re.match(r"@interface\s+(" + IDENT + r")\s*(\(\s*(" + IDENT + r")?\s*\))?", header_line)
        cls, category = m.group(1), m.group(3)
        if m.group(2):
            owner = "%s(%s)" % (cls, category or "")
            symbols.add("%s+%s" % (cls, category))
        else:
            owner = cls
            symbols.add(cls)
    else:
        owner = re.match(r"@protocol\s+(" + IDENT + ")", header_line).group(1)
        symbols.add(owner)
    for declaration in statements(body):
        if "NS_UNAVAILABLE" in declaration:
            continue
        if declaration[0] in "-+":
            symbols.add("%s[%s %s]" % (declaration[0], owner, selector(declaration)))
        elif declaration.startswith("@property"):
            symbols.add("%s.%s" % (owner, property_name(declaration)))
        elif declaration.startswith(("@optional", "@required")):
            continue
        else:
            raise ValueError("unexpected declaration in %s: %r" % (owner, declaration))


def top_level_symbols(text, symbols):
    for m in re.finditer(r"typedef\s+NS_(?:ENUM|OPTIONS)\s*\(\s*\w+\s*,\s*(" + IDENT + r")\s*\)\s*\{(.*?)\}", text, re.S):
        symbols.add(m.group(1))
        for case in re.findall(r"(?:^|,)\s*(" + IDENT + ")", m.group(2)):
            symbols.add(case)
    for m in re.finditer(r"(?:FOUNDATION_EXPORT|extern)\b([^;]*);", text):
        declaration = m.group(1)
        function = re.search(r"(" + IDENT + r")\s*\(", declaration)
        if function and function.group(1) not in TRAILING_MACROS:
            symbols.add(function.group(1))
        else:
            names = [n for n in re.findall(IDENT, declaration) if n not in TRAILING_MACROS]
            symbols.add(names[-1])


def symbols_of(text):
    symbols = set()
    container = re.compile(r"^(@interface|@protocol)\b([^\n]*)$(.*?)^@end\b", re.S | re.M)
    # `@protocol A;` and `@protocol A, B;` are forward declarations, not containers.
    text = re.sub(r"^@protocol\s+[\w\s,]+;", " ", text, flags=re.M)
    for m in container.finditer(text):
        container_symbols(m.group(1), m.group(1) + m.group(2), m.group(3), symbols)
    rest = container.sub(" ", text)
    top_level_symbols(rest, symbols)
    return symbols


def main():
    git_dir = find_git_dir(sys.argv[1] if len(sys.argv) > 1 else None)
    everything = set()
    for _name, text in headers(git_dir):
        everything |= symbols_of(clean(text))
    for symbol in sorted(everything):
        print(symbol)


if __name__ == "__main__":
    main()
