class Main {
	public static void main(String[] args) {
		long n = 0;
		while (true)
			n += System.nanoTime() & 1;
	}
}
