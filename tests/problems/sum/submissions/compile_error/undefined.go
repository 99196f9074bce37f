package main

func main() {
	fmt.Println(undefinedName)
}
