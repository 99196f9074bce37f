chunks = []
while True:
    chunks.append(bytearray(64 << 20))
