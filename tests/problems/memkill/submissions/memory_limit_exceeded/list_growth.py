# Appends 1 MiB strings until memory runs out: MLE.
n = int(input())
chunks = []
for i in range(1 << 20):
    chunks.append(bytes([i & 255]) * (1 << 20))
print(n + 1)
