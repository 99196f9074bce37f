// A program of several files: Greeting is in Greeting.java.
public class Main {
	public static void main(String[] args) {
		System.out.println(Greeting.text());
	}
}
