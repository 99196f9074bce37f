# A list of 10**10 references (80 GB) at once: where the allocation is
# refused Python raises MemoryError (exit 1 with a traceback), where it is
# granted filling it touches every page. MLE either way.
n = int(input())
a = [n] * (10 ** 10)
print(a[-1] + 1)
