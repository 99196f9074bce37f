# Reads input.txt, writes output.txt; the stdout line is not the answer.
with open("input.txt") as f:
    words = f.read().split()
n = int(words[0])
with open("output.txt", "w") as f:
    f.write("%d\n" % sum(int(w) for w in words[1:1 + n]))
print("this line on stdout is ignored")
