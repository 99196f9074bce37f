#!/usr/bin/env python3
"""Compile and start-up inside gVisor against the same compiler bare.

For each language: `gavel run` of a hello program (compile in the sandbox,
one run), against the language's own compile command and run executed bare
on the host in a temporary folder (what an isolate-based judge pays: no
sandbox, no precompiled header). For C and C++ also `gavel judge` of a
generated problem with 1, 50 and 100 tests and a typical accepted solution
(C++ with bits/stdc++.h), against a bare compile plus the same number of
bare runs: the end-to-end ratio, and the per-test overhead (100 tests
against 1). Medians of BENCH_REPS runs; every figure printed with its bare
baseline and the load average, since the machine may be shared.

    sudo BUILD=build tests/bench/bench_compile.py [language ...]

Environment: BUILD [build], BENCH_REPS [3], GAVEL_PCH_DIR (as gavel run).
Not part of `make test`.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("BUILD", "build")
BUILD = BUILD if os.path.isabs(BUILD) else os.path.join(ROOT, BUILD)
REPS = int(os.environ.get("BENCH_REPS", "3"))
GAVEL = os.path.join(BUILD, "gavel")
ENV = dict(os.environ, GAVEL_INIT=os.path.join(BUILD, "gavel-init"))

HELLO = {
    "c": ("main.c", '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n'),
    "cpp": ("main.cpp", '#include <bits/stdc++.h>\nint main() { std::cout << "hello" << std::endl; }\n'),
    "python3": ("main.py", 'print("hello")\n'),
    "java": ("Main.java", 'public class Main { public static void main(String[] a) { System.out.println("hello"); } }\n'),
    "javascript": ("main.js", 'console.log("hello");\n'),
    "go": ("main.go", 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n'),
    "rust": ("main.rs", 'fn main() { println!("hello"); }\n'),
    "pascal": ("main.pas", "program hello; begin writeln('hello'); end.\n"),
}
# A typical accepted solution of "a + b" for the judged problem.
SUM = {
    "c": ("sum.c", '#include <stdio.h>\nint main(void) { long a, b; if (scanf("%ld %ld", &a, &b) != 2) return 1;'
          ' printf("%ld\\n", a + b); return 0; }\n'),
    "cpp": ("sum.cpp", "#include <bits/stdc++.h>\nusing namespace std;\nint main() { ios::sync_with_stdio(false);"
            " long long a, b; cin >> a >> b; cout << a + b << '\\n'; }\n"),
}


def load():
    return os.getloadavg()[0]


def timed(argv, **kw):
    t0 = time.monotonic()
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    return time.monotonic() - t0, r


def median(f, reps=REPS):
    times = []
    for _ in range(reps):
        t, r = f()
        if r is not None and r.returncode != 0:
            raise RuntimeError("%s: exit %d: %s" % (r.args, r.returncode, (r.stderr or b"")[-300:].decode(errors="replace")))
        times.append(t)
    return statistics.median(times)


def lang_commands(lang):
    """The language's compile and run argv and source name from
    languages/<id>.yaml (flow lists, possibly over several lines)."""
    text = open(os.path.join(ROOT, "languages", lang + ".yaml")).read()
    out = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        key = line.split(":", 1)[0]
        if key not in ("compile", "run", "source") or ":" not in line:
            continue
        v = line.split(":", 1)[1].strip()
        if not v.startswith("["):
            out[key] = v.strip('"')
            continue
        while "]" not in v and i + 1 < len(lines):
            i += 1
            v += " " + lines[i].strip()
        out[key] = [x.strip().strip('"') for x in v[1:v.index("]")].split(",")]
    return out


def bare_argv(argv, source, folder, memory_mb=256):
    res = []
    for a in argv:
        # Go's build cache: the run's own, cold, as in the sandbox.
        a = a.replace("=/tmp/", "=" + folder + "/")
        if a.startswith("-I/pch"):
            continue  # bare: no precompiled header
        a = a.replace("{source}", source).replace("{memory_mb}", str(memory_mb))
        a = a.replace("{compile_memory_mb}", "1024").replace("{main_class}", "Main")
        res.append(a)
    return res


def bare(lang, name, text, runs=1, stdin=b""):
    """Seconds for the bare compile plus `runs` bare runs, in a fresh folder."""
    cmd = lang_commands(lang)
    d = tempfile.mkdtemp(prefix="gavel-bench-bare.")
    try:
        src = cmd.get("source", name)
        if lang == "java":
            src = "Main.java"
        with open(os.path.join(d, src), "w") as f:
            f.write(text)
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": d}
        t0 = time.monotonic()
        if "compile" in cmd:
            r = subprocess.run(bare_argv(cmd["compile"], src, d), cwd=d, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            if r.returncode:
                return time.monotonic() - t0, r
        for _ in range(runs):
            r = subprocess.run(bare_argv(cmd["run"], src, d), cwd=d, env=env, input=stdin, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            if r.returncode:
                return time.monotonic() - t0, r
        return time.monotonic() - t0, r
    finally:
        shutil.rmtree(d, ignore_errors=True)


def gavel_run(lang, name, text):
    d = tempfile.mkdtemp(prefix="gavel-bench-run.")
    try:
        p = os.path.join(d, name)
        with open(p, "w") as f:
            f.write(text)
        return timed([GAVEL, "run", "--lang", lang, p], env=ENV)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def make_problem(ntests):
    d = tempfile.mkdtemp(prefix="gavel-bench-problem.")
    os.makedirs(os.path.join(d, "data", "secret"))
    with open(os.path.join(d, "problem.yaml"), "w") as f:
        f.write("name: Sum bench\nlimits:\n  time_limit: 2\n")
    for i in range(ntests):
        a, b = i * 7919 % 100003, i * 104729 % 99991
        with open(os.path.join(d, "data", "secret", "%03d.in" % i), "w") as f:
            f.write("%d %d\n" % (a, b))
        with open(os.path.join(d, "data", "secret", "%03d.ans" % i), "w") as f:
            f.write("%d\n" % (a + b))
    return d


def gavel_judge(problem, lang, name, text):
    d = tempfile.mkdtemp(prefix="gavel-bench-sol.")
    try:
        p = os.path.join(d, name)
        with open(p, "w") as f:
            f.write(text)
        t, r = timed([GAVEL, "judge", problem, p], env=ENV)
        if r.returncode == 0 and b"verdict AC" not in r.stdout + r.stderr:
            r.returncode = 1
        return t, r
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main(argv):
    if os.geteuid() != 0:
        sys.exit("bench_compile: needs root (runsc and cgroups)")
    langs = argv or list(HELLO)
    print("bench_compile: medians of %d, load %.1f at start" % (REPS, load()))
    # One run first: gavel run builds the precompiled headers on first use.
    gavel_run("cpp", *HELLO["cpp"])
    print("\n== gavel run of hello vs the same compile and run bare")
    print("%-11s %9s %9s %7s %6s" % ("language", "gavel s", "bare s", "ratio", "load"))
    for lang in langs:
        name, text = HELLO[lang]
        try:
            g = median(lambda: gavel_run(lang, name, text))
            b = median(lambda: bare(lang, name, text))
        except RuntimeError as e:
            print("%-11s failed: %s" % (lang, e))
            continue
        print("%-11s %9.2f %9.2f %7.2f %6.1f" % (lang, g, b, g / b, load()))
    print("\n== gavel judge of a+b (tests in data/secret) vs a bare compile and as many bare runs")
    print("%-5s %6s %9s %9s %7s %6s" % ("lang", "tests", "gavel s", "bare s", "ratio", "load"))
    for lang in [l for l in ("c", "cpp") if l in langs]:
        name, text = SUM[lang]
        per = {}
        for n in (1, 50, 100):
            prob = make_problem(n)
            try:
                g = median(lambda: gavel_judge(prob, lang, name, text))
                b = median(lambda: bare(lang, name, text, runs=n, stdin=b"3 4\n"))
            except RuntimeError as e:
                print("%-5s %6d failed: %s" % (lang, n, e))
                continue
            finally:
                shutil.rmtree(prob, ignore_errors=True)
            per[n] = (g, b)
            print("%-5s %6d %9.2f %9.2f %7.2f %6.1f" % (lang, n, g, b, g / b, load()))
        if 1 in per and 100 in per:
            print("%-5s per-test overhead (100 tests vs 1): gavel %.1f ms, bare %.1f ms" %
                  (lang, (per[100][0] - per[1][0]) / 99 * 1000, (per[100][1] - per[1][1]) / 99 * 1000))


if __name__ == "__main__":
    main(sys.argv[1:])
