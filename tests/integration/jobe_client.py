#!/usr/bin/env python3
"""A Jobe client of our own, driving /jobe/index.php/restapi/ the way
Moodle's CodeRunner does: languages, runs with parameters, file uploads
after a 404, results polled after a 202. Written from Jobe's API
description; prints TAP.

Arguments: BASE KEY_A KEY_B SMALL_BASE KEY_C KEY_D
  BASE        a frontend with the usual wait (runs answer 200)
  KEY_A/B     two tenants' keys
  SMALL_BASE  a frontend with a 2 s wait and a 4 KiB file budget per tenant
  KEY_C       a third tenant's key (its files go through SMALL_BASE)
  KEY_D       a tenant with max_queued 1 and max_running 1
"""
import base64
import hashlib
import http.client
import threading
import json
import sys
import time
import urllib.parse

BASE, KEY_A, KEY_B, SMALL, KEY_C, KEY_D = sys.argv[1:7]
PREFIX = "/jobe/index.php/restapi/"

results = []


def check(name, cond, detail=""):
    results.append((bool(cond), name, detail))


def request(base, method, path, body=None, key=KEY_A, raw=None, headers=None):
    """(status, parsed JSON or None, raw text)."""
    u = urllib.parse.urlparse(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=180)
    h = {"Content-Type": "application/json; charset=utf-8"}
    if key:
        h["X-API-KEY"] = key
    h.update(headers or {})
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    conn.request(method, PREFIX + path, body=data, headers=h)
    resp = conn.getresponse()
    text = resp.read().decode("utf-8", "replace")
    conn.close()
    try:
        parsed = json.loads(text) if text else None
    except ValueError:
        parsed = None
    return resp.status, parsed, text


def run(language, source, base=BASE, key=KEY_A, poll=True, **spec):
    """POST runs; polls runresults after a 202 as a patient client would."""
    rs = {"language_id": language, "sourcecode": source}
    rs.update(spec)
    st, body, text = request(base, "POST", "runs", {"run_spec": rs}, key=key)
    if st == 202 and poll and isinstance(body, dict):
        for _ in range(300):
            time.sleep(0.5)
            st2, body2, text2 = request(base, "GET", "runresults/" + body["run_id"], key=key)
            if st2 != 204:
                return st2, body2, text2
    return st, body, text


def outcome(r):
    return r[1].get("outcome") if r[0] == 200 and isinstance(r[1], dict) else None


def detail(r):
    t = r[2] if len(r[2]) <= 900 else r[2][:400] + " ... " + r[2][-500:]
    return "%s %s" % (r[0], t)


# -- languages
st, langs, text = request(BASE, "GET", "languages", key=None)
ids = [l[0] for l in langs] if st == 200 and isinstance(langs, list) else []
check("GET languages: 200, a list of [id, version] pairs",
      st == 200 and ids and all(isinstance(l, list) and len(l) == 2 for l in langs), text[:300])
for want in ("c", "cpp", "python3", "java", "nodejs", "pascal"):
    check("languages lists %s with a version" % want,
          any(l[0] == want and l[1] for l in langs or []), text[:300])

# -- a run per language
hello = {
    "c": '#include <stdio.h>\nint main(void){printf("hello c\\n");return 0;}\n',
    "cpp": '#include <iostream>\nint main(){std::cout<<"hello cpp"<<std::endl;}\n',
    "python3": 'print("hello python3")\n',
    "java": 'public class Prog {\n public static void main(String[] a){System.out.println("hello java");}\n}\n',
    "nodejs": 'console.log("hello nodejs");\n',
    "php": '<?php echo "hello php\\n";\n',
    "octave": 'disp("hello octave")\n',
    "pascal": 'program hello;\nbegin\n  writeln(\'hello pascal\');\nend.\n',
}
for lang, src in hello.items():
    if lang not in ids:
        check("run %s # SKIP not offered by this host's executor" % lang, True)
        continue
    r = run(lang, src)
    check("run %s: outcome 15, its output" % lang,
          outcome(r) == 15 and r[1]["stdout"] == "hello %s\n" % lang and r[1]["cmpinfo"] == "", detail(r))

# -- stdin
r = run("python3", "import sys\nprint(sys.stdin.read().upper(), end='')\n", input="line one\nline two\n")
check("input is the program's stdin", outcome(r) == 15 and r[1]["stdout"] == "LINE ONE\nLINE TWO\n", detail(r))

# -- compile error
r = run("c", "int main(void) { return 0 }\n")
check("compile error: outcome 11 with the compiler's message in cmpinfo",
      outcome(r) == 11 and "error" in r[1]["cmpinfo"] and r[1]["stdout"] == "", detail(r))
r = run("python3", "def f(:\n  pass\n")
check("python3 syntax error: outcome 11", outcome(r) == 11 and "SyntaxError" in r[1]["cmpinfo"], detail(r))

# -- runtime errors
r = run("c", "#include <stdio.h>\nint main(void){int *p=0; printf(\"before\\n\"); fflush(stdout); return *p;}\n")
check("segmentation fault: outcome 12, output before it kept",
      outcome(r) == 12 and r[1]["stdout"] == "before\n", detail(r))
r = run("python3", "print('x')\nraise ValueError('boom')\n")
check("an uncaught exception ran to completion: outcome 15, the traceback in stderr",
      outcome(r) == 15 and "ValueError: boom" in r[1]["stderr"] and r[1]["stdout"] == "x\n", detail(r))
r = run("c", "int main(void){return 3;}\n")
check("a non-zero exit status is outcome 15", outcome(r) == 15, detail(r))

# -- limits
r = run("c", "int main(void){volatile unsigned long i=0; for(;;) i++;}\n", parameters={"cputime": 1})
check("time limit (cputime 1): outcome 13", outcome(r) == 13, detail(r))
r = run("python3", "while True:\n  pass\n", parameters={"cputime": 2})
check("python3 time limit (cputime 2): outcome 13", outcome(r) == 13, detail(r))
r = run("c", "#include <stdlib.h>\n#include <string.h>\nint main(void){for(int i=0;i<64;i++){char*p=malloc(16<<20);"
        "if(!p)return 1;memset(p,1,16<<20);}return 0;}\n", parameters={"memorylimit": 64})
check("memory limit (memorylimit 64, 1 GiB touched): outcome 17", outcome(r) == 17, detail(r))
r = run("python3", "x = bytearray(512 * 1024 * 1024)\nprint(len(x))\n", parameters={"memorylimit": 100})
check("python3 memory limit: outcome 17", outcome(r) == 17, detail(r))
r = run("c", 'int main(void){return 0;}\n', parameters={"cputime": 100000, "memorylimit": 1000000})
check("limits past the maximum are lowered to it, not refused", outcome(r) == 15, detail(r))

# -- numprocs
fork_src = ('#include <stdio.h>\n#include <unistd.h>\n#include <sys/wait.h>\n'
            'int main(void){int ok=0;for(int i=0;i<4;i++){pid_t p=fork();if(p==0)_exit(7);'
            'if(p>0){int s;waitpid(p,&s,0);if(WIFEXITED(s)&&WEXITSTATUS(s)==7)ok++;}}'
            'printf("%d children\\n",ok);return 0;}\n')
r = run("c", fork_src, parameters={"numprocs": 10})
check("numprocs 10: a C program forks 4 children", outcome(r) == 15 and r[1]["stdout"] == "4 children\n", detail(r))
r = run("python3", "import subprocess\nprint(subprocess.run(['/usr/bin/python3', '-c', 'print(6*7)'],"
        " capture_output=True, text=True).stdout, end='')\n", parameters={"numprocs": 20})
check("numprocs 20: python3 runs a subprocess", outcome(r) == 15 and r[1]["stdout"] == "42\n", detail(r))

# -- a CodeRunner-style Python template: it writes the student's C answer
# and a Python file, compiles the C with gcc, runs what gcc built on its
# stdin and lints the Python with pylint, all by subprocess in the working
# directory
with open(__file__.replace("jobe_client.py", "jobe_template.py")) as f:
    template = f.read()
r = run("python3", template, input="40 2\n", parameters={"numprocs": 20, "cputime": 20, "memorylimit": 1000})
check("a Python template writes a C answer beside it and compiles it with gcc by subprocess",
      outcome(r) == 15 and "gcc 0 " in r[1]["stdout"] and "built True executable True\n" in r[1]["stdout"],
      detail(r))
check("the template runs what gcc built, on the run's stdin, and prints its output",
      outcome(r) == 15 and "answer 0 42 \n" in r[1]["stdout"], detail(r))
check("the template's run cannot reach /box (closed while it runs)",
      outcome(r) == 15 and "box closed 13\n" in r[1]["stdout"], detail(r))
check("the template runs pylint by subprocess (clean module: status 0)",
      outcome(r) == 15 and "pylint 0" in r[1]["stdout"], detail(r))

# -- UTF-8 and not
r = run("python3", "print('h\u00e9llo \u2713 \u65e5\u672c')\n")
check("UTF-8 output comes back as is", outcome(r) == 15 and r[1]["stdout"] == "h\u00e9llo \u2713 \u65e5\u672c\n",
      detail(r))
r = run("c", '#include <stdio.h>\nint main(void){fputs("caf\\xe9 \\xff!\\n", stdout);return 0;}\n')
check("bytes that are not UTF-8 come back read as Latin-1",
      outcome(r) == 15 and r[1]["stdout"] == "caf\u00e9 \u00ff!\n", detail(r))

# -- arguments
r = run("python3", "import sys\nprint(sys.flags.ignore_environment, sys.flags.dont_write_bytecode)\n",
        parameters={"interpreterargs": ["-BE"]})
check("interpreterargs reach the interpreter (python3 -BE: both flags set)",
      outcome(r) == 15 and r[1]["stdout"] == "1 1\n", detail(r))
asserting = "assert False, 'checked'\nprint('passed')\n"
r = run("python3", asserting)
check("without interpreterargs an assert False fails", outcome(r) == 15 and r[1]["stdout"] == "" and
      "AssertionError: checked" in r[1]["stderr"], detail(r))
r = run("python3", asserting, parameters={"interpreterargs": ["-O"]})
check("interpreterargs -O: the assert False passes silently",
      outcome(r) == 15 and r[1]["stdout"] == "passed\n" and r[1]["stderr"] == "", detail(r))
r = run("python3", "print(1)\n", parameters={"interpreterargs": ["-B", "-c"]})
check("an interpreterargs word outside the language's list: 400 naming it",
      r[0] == 400 and isinstance(r[1], str) and "'-c'" in r[1] and "interpreterargs" in r[1], detail(r))
r = run("c", '#include <stdio.h>\nint main(int c,char**v){for(int i=1;i<c;i++)printf("[%s]",v[i]);puts("");return 0;}\n',
        parameters={"runargs": ["one", "two words", "-x"]})
check("runargs reach the program", outcome(r) == 15 and r[1]["stdout"] == "[one][two words][-x]\n", detail(r))
c89 = '#include <stdio.h>\nint main(void)\n{\n  // a C99 comment\n  printf("ok\\n");\n  return 0;\n}\n'
r = run("c", c89)
check("a // comment compiles by default", outcome(r) == 15, detail(r))
r = run("c", c89, parameters={"compileargs": ["-std=c89"]})
check("compileargs -std=c89 make the // comment a compile error", outcome(r) == 11, detail(r))
r = run("c", '#include <math.h>\n#include <stdio.h>\nint main(void){printf("%.0f\\n", sqrt(49.0));return 0;}\n',
        parameters={"compileargs": ["-Wall"], "linkargs": ["-lm"]})
check("compileargs and linkargs together", outcome(r) == 15 and r[1]["stdout"] == "7\n", detail(r))
r = run("c", "int main(void){return 0;}\n", parameters={"compileargs": ["-fplugin=/tmp/x.so"]})
check("a compile option outside the language's list: 400 naming it",
      r[0] == 400 and isinstance(r[1], str) and "-fplugin" in r[1], detail(r))

# -- files: 404, upload, run again (CodeRunner's cycle)
data = "alpha\nbeta\n"
fid = hashlib.md5(data.encode()).hexdigest()
prog = "print(open('data.txt').read().upper(), end='')\n"
r = run("python3", prog, file_list=[[fid, "data.txt"]])
check("a run naming a file the server does not hold: 404", r[0] == 404, detail(r))
st, _, t = request(BASE, "HEAD", "files/" + fid)
check("HEAD of a file not held: 404", st == 404, t)
st, _, t = request(BASE, "PUT", "files/" + fid, {"file_contents": base64.b64encode(data.encode()).decode()})
check("PUT files/{id}: 204", st == 204, "%s %s" % (st, t))
st, _, t = request(BASE, "HEAD", "files/" + fid)
check("HEAD of the file now: 204", st == 204, t)
r = run("python3", prog, file_list=[[fid, "data.txt"]])
check("the run again: the file is beside the source", outcome(r) == 15 and r[1]["stdout"] == "ALPHA\nBETA\n",
      detail(r))
binary = bytes(range(256))
st, body, t = request(BASE, "POST", "files", {"file_contents": base64.b64encode(binary).decode()})
check("POST files: 201 with the server's id", st == 201 and isinstance(body, str) and len(body) >= 8, t)
pid = body if isinstance(body, str) and body.isalnum() else "notposted"
st, _, t = request(BASE, "HEAD", "files/" + pid)
check("HEAD of the posted file: 204", st == 204, t)
r = run("c", '#include <stdio.h>\nint main(void){FILE*f=fopen("blob.bin","rb");int n=0,c,s=0;'
        'while((c=fgetc(f))!=EOF){n++;s+=c;}printf("%d %d\\n",n,s);return 0;}\n', file_list=[[pid, "blob.bin"]])
check("a binary file arrives byte for byte", outcome(r) == 15 and r[1]["stdout"] == "256 32640\n", detail(r))
st, _, t = request(BASE, "HEAD", "files/" + fid, key=KEY_B)
check("another tenant's HEAD of the same id: 404", st == 404, t)
r = run("python3", prog, key=KEY_B, file_list=[[fid, "data.txt"]])
check("another tenant's run naming it: 404", r[0] == 404, detail(r))
st, _, t = request(BASE, "PUT", "files/bad", {"file_contents": "YQ=="})
check("PUT with a short id: 400", st == 400, t)
st, _, t = request(BASE, "PUT", "files/" + fid, {"file_contents": "***"})
check("PUT with content that is not base64: 400", st == 400, t)
r = run("python3", prog, file_list=[[fid, "../etc/passwd"]])
check("a file name with a path: 400", r[0] == 400, detail(r))

# -- a run's files are weighed by their stored sizes before any is read:
# two files of 600 KiB are each fine, together past the 1 MiB a run may
# hold (max_additional_files_size): 400 naming the sum
big = {"bigfile0001": b"x" * (600 << 10), "bigfile0002": b"y" * (600 << 10)}
sts = [request(BASE, "PUT", "files/" + k, {"file_contents": base64.b64encode(v).decode()})[0] for k, v in big.items()]
check("two files of 600 KiB uploaded", sts == [204, 204], str(sts))
r = run("python3", "import os\nprint(os.path.getsize('a.bin'))\n", file_list=[["bigfile0001", "a.bin"]])
check("a run with one of them: the file is there", outcome(r) == 15 and r[1]["stdout"] == "614400\n", detail(r))
r = run("python3", "print(1)\n", file_list=[["bigfile0001", "a.bin"], ["bigfile0002", "b.bin"]])
check("a run with both: 400 naming their size, refused before they are read",
      r[0] == 400 and isinstance(r[1], str) and "1228800 bytes" in r[1] and "file_list" in r[1], detail(r))
r = run("python3", "print(1)\n", file_list=[["bigfile0001", "a.bin"], ["notheld00001", "b.bin"]])
check("a run with one of them and a file not held: 404", r[0] == 404, detail(r))

# -- Java without sourcefilename
r = run("java", 'import java.util.*;\npublic class Greeter {\n  public static void main(String[] a) {\n'
        '    System.out.println("class " + Greeter.class.getSimpleName());\n  }\n}\n')
check("Java without sourcefilename: the class name from the source",
      outcome(r) == 15 and r[1]["stdout"] == "class Greeter\n", detail(r))
r = run("java", 'public class Named { public static void main(String[] a){System.out.println("n");} }\n',
        sourcefilename="Named.java")
check("Java with sourcefilename", outcome(r) == 15 and r[1]["stdout"] == "n\n", detail(r))

# -- bad requests
st, body, t = request(BASE, "POST", "runs", raw=b'{"run_spec": {"language_id": "c",')
check("malformed JSON: 400 with a message", st == 400 and isinstance(body, str) and body, t)
r = run("cobol", "x")
check("unknown language: 400 \"Language 'cobol' is not known\"",
      r[0] == 400 and r[1] == "Language 'cobol' is not known", detail(r))
st, body, t = request(BASE, "POST", "runs", {"run_spec": {"language_id": "c"}})
check("missing sourcecode: 400 naming it",
      st == 400 and body == "run_spec is missing the required attribute 'sourcecode'", t)
st, body, t = request(BASE, "POST", "runs", {"spec": {}})
check("no run_spec: 400", st == 400 and isinstance(body, str), t)
st, body, t = request(BASE, "DELETE", "runs")
check("a wrong method: 405", st == 405, t)
st, body, t = request(BASE, "POST", "runs", {"run_spec": {"language_id": "c", "sourcecode": "int main(){}"}}, key=None)
check("no X-API-KEY: 401", st == 401, t)
st, body, t = request(BASE, "GET", "runresults/AAAAAAAAAAAAAAAAAAAAAA")
check("runresults of an unknown id: 404", st == 404, t)

# -- 202 and polling (a frontend that waits 2 s)
# (a program idle for its whole CPU limit is a time limit: sleep less)
r = run("python3", "import time\ntime.sleep(4)\nprint('late')\n", base=SMALL, key=KEY_C, poll=False,
        parameters={"cputime": 6})
check("a run past the wait: 202 with its run_id", r[0] == 202 and isinstance(r[1], dict) and r[1].get("run_id"),
      detail(r))
rid = r[1].get("run_id") if isinstance(r[1], dict) else "x"
st, _, t = request(SMALL, "GET", "runresults/" + str(rid), key=KEY_C)
check("runresults while it runs: 204", st == 204, "%s %s" % (st, t))
st, _, t = request(SMALL, "GET", "runresults/" + str(rid), key=KEY_A)
check("another tenant's runresults of it: 404", st == 404, t)
body = None
for _ in range(120):
    time.sleep(0.5)
    st, body, t = request(SMALL, "GET", "runresults/" + str(rid), key=KEY_C)
    if st != 204:
        break
check("runresults when done: 200 with the result",
      st == 200 and body.get("outcome") == 15 and body.get("stdout") == "late\n" and body.get("run_id") == rid, t)
# under load: 6 runs at once through the short wait, each polled to its end
outs = [None] * 6


def one(i):
    outs[i] = run("python3", "import time\ntime.sleep(1)\nprint(%d)\n" % i, base=SMALL, key=KEY_C)


ts = [threading.Thread(target=one, args=(i,)) for i in range(6)]
for th in ts:
    th.start()
for th in ts:
    th.join()
check("6 runs at once, 202s polled: each its own result",
      all(outcome(outs[i]) == 15 and outs[i][1]["stdout"] == "%d\n" % i for i in range(6)),
      " | ".join(detail(o) for o in outs if o))

# -- over quota is Jobe's "server overloaded" (outcome 21), a 200 answer
outs_d = [None] * 3


def one_d(i):
    outs_d[i] = run("python3", "import time\ntime.sleep(3)\nprint('d')\n", key=KEY_D, parameters={"cputime": 5})


ts = [threading.Thread(target=one_d, args=(i,)) for i in range(3)]
for th in ts:
    th.start()
for th in ts:
    th.join()
got = sorted(outcome(o) for o in outs_d)
check("3 runs at once for a tenant with max_queued 1, max_running 1: the refused ones are outcome 21",
      got.count(21) >= 1 and got.count(15) >= 1 and set(got) <= {15, 21} and
      all("max_queued" in o[1]["stderr"] for o in outs_d if outcome(o) == 21),
      " | ".join(detail(o) for o in outs_d if o))

# -- the file budget (4 KiB per tenant on SMALL)
st1, _, t1 = request(SMALL, "PUT", "files/budget0001", {"file_contents": base64.b64encode(b"a" * 3000).decode()},
                     key=KEY_C)
st2, _, t2 = request(SMALL, "PUT", "files/budget0002", {"file_contents": base64.b64encode(b"b" * 3000).decode()},
                     key=KEY_C)
check("the tenant's file budget: the first 3000 bytes 204, the next 413", st1 == 204 and st2 == 413,
      "%s %s / %s %s" % (st1, t1, st2, t2))
st3, _, t3 = request(SMALL, "PUT", "files/budget0001", {"file_contents": base64.b64encode(b"c" * 3500).decode()},
                     key=KEY_C)
check("replacing a file counts its new size only", st3 == 204, "%s %s" % (st3, t3))
st4, _, t4 = request(SMALL, "PUT", "files/budget0003", {"file_contents": base64.b64encode(b"d" * 3000).decode()},
                     key=KEY_B)
check("another tenant's budget is its own", st4 == 204, "%s %s" % (st4, t4))

print("1..%d" % len(results))
fails = 0
for i, (ok, name, d) in enumerate(results, 1):
    print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
    if not ok:
        fails += 1
        print("# " + d.replace("\n", "\\n")[:800])
sys.exit(1 if fails else 0)
