#!/usr/bin/env python3
"""Finds a hidden test file's bytes in a result: hidden_leak.py PROBLEM < JSON.

PROBLEM is an instructor-suite package (suite/suite.yaml); JSON is any
result shape of one of its submissions (gavel judge --json, a native or
Judge0 submission). Prints one line per leak and exits 1 when there is
one, 0 when there is none:
  - any string anywhere holding a hidden file's marker GAVEL-HIDDEN-;
  - any number (or number in a string: Judge0's seconds) that equals 4
    bytes of a hidden file read as an integer, big or little endian, at
    any offset, as milliseconds or as seconds: a text file's 4 bytes are
    at least 0x20202020, a time no real run reaches, so a match is a leak,
    never chance.
Hidden files are the groups marked `hidden: true` in suite.yaml, read with
a small line scan (no YAML library: the fixtures' layout is fixed)."""
import json
import os
import sys


def hidden_files(problem):
    files, current = [], None
    with open(os.path.join(problem, "suite", "suite.yaml")) as f:
        for line in f:
            s = line.strip()
            if s.startswith("- file:"):
                current = s.split(":", 1)[1].strip()
            elif s.startswith("hidden:") and s.split(":", 1)[1].strip() == "true" and current:
                files.append(os.path.join(problem, "suite", current))
    return files


def windows(paths):
    out = set()
    for p in paths:
        data = open(p, "rb").read()
        for i in range(len(data) - 3):
            w = data[i:i + 4]
            out.add(int.from_bytes(w, "big"))
            out.add(int.from_bytes(w, "little"))
    return out


def numbers(v, path, out):
    if isinstance(v, bool):
        return
    if isinstance(v, (int, float)):
        out.append((path, v))
    elif isinstance(v, str):
        try:
            out.append((path, float(v)))
        except ValueError:
            pass
    elif isinstance(v, list):
        for i, x in enumerate(v):
            numbers(x, "%s[%d]" % (path, i), out)
    elif isinstance(v, dict):
        for k, x in v.items():
            numbers(x, "%s.%s" % (path, k), out)


def main():
    problem = sys.argv[1]
    text = sys.stdin.read()
    leaks = []
    if "GAVEL-HIDDEN-" in text:
        leaks.append("a hidden file's marker GAVEL-HIDDEN-")
    try:
        doc = json.loads(text)
    except ValueError:
        print("unparsable JSON")
        return 1
    win = windows(hidden_files(problem))
    found = []
    numbers(doc, "", found)
    for path, x in found:
        for ms in (x, x * 1000):
            if abs(ms - round(ms)) < 1e-6 and int(round(ms)) in win and int(round(ms)) >= 0x01000000:
                leaks.append("%s = %r: 4 bytes of a hidden file" % (path, x))
                break
    for l in leaks:
        print(l)
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
