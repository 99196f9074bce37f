# An exception that is not MemoryError: exit 1 with a traceback, RE.
n = int(input())
raise ValueError("not a memory problem: %d" % n)
