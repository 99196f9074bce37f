// Prints nothing at all.
