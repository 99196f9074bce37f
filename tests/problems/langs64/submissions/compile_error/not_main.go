// A package other than main: go build would write an archive, not a
// program. It must be a compile error with the compiler's message.
package solution

import "fmt"

func main() {
	var n int
	fmt.Scan(&n)
	fmt.Println(n)
}
