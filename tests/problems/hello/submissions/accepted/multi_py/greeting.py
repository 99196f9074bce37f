TEXT = "Hello, World!"
