# A program of several files: the greeting comes from the module beside it.
import greeting

print(greeting.TEXT)
