x = sscanf(fgetl(stdin), "%ld %ld");
printf("%d\n", int64(x(1)) + int64(x(2)));
