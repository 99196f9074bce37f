// Go: one 8 GiB slice, every page touched: MLE.
package main

import "fmt"

func main() {
	var n int
	fmt.Scan(&n)
	b := make([]byte, 8<<30)
	for i := 0; i < len(b); i += 4096 {
		b[i] = byte(n)
	}
	fmt.Println(n + int(b[len(b)/2]))
}
