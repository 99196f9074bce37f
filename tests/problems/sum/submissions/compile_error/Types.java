class Main {
	public static void main(String[] args) {
		int x = "not a number";
	}
}
