class Greeting {
	static String text() {
		return "Hello, World!";
	}
}
