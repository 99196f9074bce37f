# A CodeRunner-style question template (what tests/integration/jobe_client.py
# sends as a Jobe run's source): it writes a student's C answer and a
# Python module into the working directory, compiles the C with gcc and
# runs what gcc built on the run's stdin (the linker marks its output
# executable: Jobe runs may chmod, seccomp_policy.c), lints the Python with
# pylint, each by subprocess, and reports whether /box is out of reach.
import os
import subprocess
import sys

NL = chr(10)
C_ANSWER = ['#include <stdio.h>',
            'int main(void) { int a, b; if (scanf("%d %d", &a, &b) != 2) return 1; printf("%d%c", a + b, 10); return 0; }']
with open('answer.c', 'w') as f:
    f.write(NL.join(C_ANSWER) + NL)
cc = subprocess.run(['/usr/bin/gcc', '-std=c99', '-Wall', '-o', 'answer', 'answer.c'], capture_output=True, text=True)
print('gcc', cc.returncode, cc.stderr.strip()[:200])
print('built', os.path.isfile('answer'), 'executable', os.access('answer', os.X_OK))
run = subprocess.run(['./answer'], input=sys.stdin.read(), capture_output=True, text=True)
print('answer', run.returncode, run.stdout.strip(), run.stderr.strip()[:200])
try:
    os.listdir('/box')
    print('box open')
except OSError as e:
    print('box closed', e.errno)
STUDENT = ['"""A module."""', '', '', 'def add(first, second):', '    """Adds."""', '    return first + second']
with open('student.py', 'w') as f:
    f.write(NL.join(STUDENT) + NL)
lint = subprocess.run(['/usr/bin/pylint', '--score=n', 'student.py'], capture_output=True, text=True)
print('pylint', lint.returncode, lint.stdout.strip()[:200], lint.stderr.strip()[:300])
