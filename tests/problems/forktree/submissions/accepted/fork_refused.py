# Python's process limit is 1: os.fork and subprocess must fail. Answers
# right only then.
import os
import subprocess

n = int(input())
ok = True
try:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    ok = False
except BlockingIOError:
    pass
try:
    subprocess.run(["/bin/true"])
    ok = False
except OSError:
    pass
print(n + 1 if ok else "a second process started under a process limit of 1")
